package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"k8s.io/client-go/rest"

	"kubelab.dev/kubelab/cluster/internal/probe"
)

// SnapshotStatus is what etcdutl reads from a snapshot file.
type SnapshotStatus struct {
	// Revision is the etcd revision of the last write the snapshot holds.
	Revision int64 `json:"revision"`
	// Hash is etcdutl's hash of the snapshot's keys and values.
	Hash uint32 `json:"hash"`
	// Keys is the number of keys (every revision kept since the last
	// compaction counts).
	Keys int `json:"keys"`
	// Size is the snapshot's size in bytes.
	Size int64 `json:"size"`
	// Version is the storage version of the member it came from.
	Version string `json:"version"`
}

// Snapshot is an etcd snapshot saved by Cluster.SaveSnapshot.
type Snapshot struct {
	SnapshotStatus
	// Name is the snapshot's name, as a lab gave it.
	Name string `json:"name"`
	// File is the snapshot on this host.
	File string `json:"file"`
	// Member is the member it was streamed from.
	Member string `json:"member"`
}

// EtcdRestorer is a backend whose etcd members' data can be replaced by a
// snapshot. Snapshots are files on this host, in a directory of the
// cluster's own (they go away with the cluster).
type EtcdRestorer interface {
	// SnapshotDir is the directory snapshots of the cluster are saved in.
	SnapshotDir() string
	// SnapshotStatus reads a snapshot file (etcdutl snapshot status).
	SnapshotStatus(ctx context.Context, file string) (SnapshotStatus, error)
	// RestoreEtcd stops every etcd member, restores file into a fresh data
	// directory for each (etcdutl snapshot restore with the member's name
	// and peer URL, the initial cluster and token as the new cluster's
	// initial-cluster-token), swaps it in for the member's data and starts
	// the members again. The caller stops the members' clients first.
	RestoreEtcd(ctx context.Context, file, token string) error
}

// ErrNoEtcdRestore says a backend cannot save or restore etcd snapshots.
var ErrNoEtcdRestore = errors.New("cannot save or restore etcd snapshots")

func (c *Cluster) restorer() (EtcdRestorer, error) {
	r, ok := c.Backend.(EtcdRestorer)
	if !ok {
		return nil, fmt.Errorf("the %s backend %w", c.Name(), ErrNoEtcdRestore)
	}
	return r, nil
}

// SaveSnapshot streams a point-in-time copy of the etcd database from one
// member (the leader, else any reachable member) to a file named after
// the snapshot in the cluster's snapshot directory, as `etcdctl snapshot
// save` does, and reads its status.
func (c *Cluster) SaveSnapshot(ctx context.Context, name string) (Snapshot, error) {
	s := Snapshot{Name: name}
	if name == "" || filepath.Base(name) != name || strings.HasPrefix(name, ".") {
		return s, fmt.Errorf("snapshot %q: want a file name", name)
	}
	r, err := c.restorer()
	if err != nil {
		return s, err
	}
	member, err := c.snapshotSource(ctx)
	if err != nil {
		return s, fmt.Errorf("snapshot %s: %w", name, err)
	}
	s.Member = member
	if err := os.MkdirAll(r.SnapshotDir(), 0o700); err != nil {
		return s, fmt.Errorf("snapshot %s: %w", name, err)
	}
	s.File = filepath.Join(r.SnapshotDir(), name+".db")
	acc := c.Access()
	cfg := clientv3.Config{Endpoints: []string{acc.EtcdEndpoints[member]}, TLS: acc.EtcdTLS, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if acc.EtcdDial != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(acc.EtcdDial)}
	}
	if _, err := snapshot.SaveWithVersion(ctx, zap.NewNop(), cfg, s.File); err != nil {
		return s, fmt.Errorf("snapshot %s from %s: %w", name, member, err)
	}
	st, err := r.SnapshotStatus(ctx, s.File)
	if err != nil {
		return s, fmt.Errorf("snapshot %s: %w", name, err)
	}
	s.SnapshotStatus = st
	c.log.Info("etcd snapshot", "name", name, "member", member, "revision", st.Revision, "size", st.Size)
	return s, nil
}

// snapshotSource picks the member to stream a snapshot from.
func (c *Cluster) snapshotSource(ctx context.Context) (string, error) {
	ms, err := c.EtcdStatus(ctx)
	if err != nil {
		return "", err
	}
	pick := ""
	for _, m := range ms {
		if m.Reachable && (m.IsLeader || pick == "") {
			pick = m.Name
		}
	}
	if pick == "" {
		return "", errors.New("no etcd member is reachable")
	}
	return pick, nil
}

// Restored is what a restore did.
type Restored struct {
	// Snapshot restored.
	Snapshot string `json:"snapshot"`
	// Members are the new member IDs, by name.
	Members map[string]string `json:"members"`
	// Took is how long the whole restore took, apiservers ready again.
	Took time.Duration `json:"took"`
}

// RestoreSnapshot restores every etcd member from s, the way Kubernetes'
// and etcd's guides say to restore a cluster: stop the schedulers and
// controller-managers, then the apiservers (none may write to, or cache
// from, the old data meanwhile); restore every member from the same
// snapshot into a fresh data directory (a new etcd cluster: new member and
// cluster IDs, the revision bumped past any resourceVersion clients have
// seen and marked compacted); wait for a leader; start the apiservers and
// wait until they are ready, then the schedulers and controller-managers.
// Clients that were watching get "resource version too old" and relist.
func (c *Cluster) RestoreSnapshot(ctx context.Context, s Snapshot) (Restored, error) {
	out := Restored{Snapshot: s.Name}
	start := time.Now()
	r, err := c.restorer()
	if err != nil {
		return out, err
	}
	comps, err := c.Components(ctx)
	if err != nil {
		return out, err
	}
	clients := byRoles(comps, RoleScheduler, RoleControllerManager)
	apis := byRoles(comps, RoleAPIServer)
	// Killed, not stopped: their state is about to be replaced anyway,
	// and an apiserver drains for seconds on SIGTERM.
	if err := c.ActAll(ctx, append(clients, apis...), Kill); err != nil {
		return out, fmt.Errorf("restore %s: stop the control plane: %w", s.Name, err)
	}
	token := fmt.Sprintf("kubelab-%s-%s-%d", c.Topology().Name, s.Name, time.Now().Unix())
	if err := r.RestoreEtcd(ctx, s.File, token); err != nil {
		return out, fmt.Errorf("restore %s: %w", s.Name, err)
	}
	members, err := c.waitEtcd(ctx)
	if err != nil {
		return out, fmt.Errorf("restore %s: %w", s.Name, err)
	}
	out.Members = members
	if err := c.ActAll(ctx, apis, Start); err != nil {
		return out, fmt.Errorf("restore %s: start the apiservers: %w", s.Name, err)
	}
	if err := c.waitAPIServers(ctx); err != nil {
		return out, fmt.Errorf("restore %s: %w", s.Name, err)
	}
	if err := c.ActAll(ctx, clients, Start); err != nil {
		return out, fmt.Errorf("restore %s: start the schedulers and controller-managers: %w", s.Name, err)
	}
	out.Took = time.Since(start)
	c.log.Info("etcd restore", "snapshot", s.Name, "members", members, "took", out.Took)
	return out, nil
}

func byRoles(comps []Component, roles ...Role) []string {
	var out []string
	for _, c := range comps {
		for _, r := range roles {
			if c.Role == r {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// ActAll applies a to the named components at once.
func (c *Cluster) ActAll(ctx context.Context, names []string, a Action) error {
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, n := range names {
		wg.Go(func() {
			if err := c.Act(ctx, n, a); err != nil {
				errs[i] = fmt.Errorf("%s %s: %w", a, n, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitEtcd waits until every member is reachable and follows one leader,
// and returns the members' IDs by name.
func (c *Cluster) waitEtcd(ctx context.Context) (map[string]string, error) {
	var ids map[string]string
	err := poll(ctx, "etcd members with a leader", func(ctx context.Context) error {
		ms, err := c.EtcdStatus(ctx)
		if err != nil {
			return err
		}
		ids = map[string]string{}
		leaders := map[string]bool{}
		var errs []error
		for _, m := range ms {
			if !m.Reachable {
				errs = append(errs, fmt.Errorf("%s: %s", m.Name, m.Error))
				continue
			}
			ids[m.Name] = m.ID
			leaders[m.Leader] = true // a name (EtcdStatus resolves IDs)
		}
		if len(errs) == 0 && (len(leaders) != 1 || leaders[""]) {
			errs = append(errs, fmt.Errorf("no single leader yet (%v)", sortedKeys(leaders)))
		}
		return errors.Join(errs...)
	})
	return ids, err
}

// waitAPIServers waits until every apiserver answers /readyz.
func (c *Cluster) waitAPIServers(ctx context.Context) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("apiserver client: %w", err)
	}
	for name, u := range c.Access().APIServers {
		if err := poll(ctx, name+" /readyz", func(ctx context.Context) error { return probe.HTTPOK(ctx, hc, u+"/readyz") }); err != nil {
			return err
		}
	}
	return nil
}

// poll runs check until it passes or ctx ends, backing off from 100ms to
// 1s; on timeout the error carries the last failure.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	err := Poll(ctx, 100*time.Millisecond, time.Second, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		return check(cctx)
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", what, err)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
