package ops

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

func init() {
	Register("snapshot", "{name: before}", func(s *SnapshotOp) Op { return s })
	Register("restore", "{snapshot: backup}", func(r *RestoreOp) Op { return r })
}

// snapshotType is the type of a snapshot's binding.
var snapshotType = reflect.TypeFor[assertions.Snapshot]()

// SnapshotOp saves an etcd snapshot (etcdctl snapshot save): a
// point-in-time copy of one healthy member's database, streamed to a file
// in the cluster's own directory.
type SnapshotOp struct {
	Name string `yaml:"name"`
}

// Binding is the snapshot's name.
func (s *SnapshotOp) Binding() (name, field string) { return s.Name, "name" }

// Summary names the snapshot.
func (s *SnapshotOp) Summary() string { return "etcd snapshot " + s.Name }

// DefaultTimeout is that of a command.
func (s *SnapshotOp) DefaultTimeout() time.Duration { return slowTimeout }

// Validate binds the name for the operations after it (the decoder
// reports an empty one).
func (s *SnapshotOp) Validate(c Checker) {
	c.BindType(s.Name, snapshotType, "name")
}

// Exec saves the snapshot and binds its status.
func (s *SnapshotOp) Exec(ctx context.Context, env Env) (string, error) {
	start := time.Now()
	snap, err := env.Cluster().SaveSnapshot(ctx, s.Name)
	if err != nil {
		return "", err
	}
	env.Bind(s.Name, assertions.Snapshot{Name: snap.Name, Member: snap.Member, Revision: int(snap.Revision),
		Keys: snap.Keys, Size: int(snap.Size), Hash: int(snap.Hash), File: snap.File})
	return fmt.Sprintf("snapshot %s from %s in %s: revision %d, %d keys, %d bytes, hash %08x",
		s.Name, snap.Member, time.Since(start).Round(time.Millisecond), snap.Revision, snap.Keys, snap.Size, snap.Hash), nil
}

// RestoreOp restores every etcd member from a snapshot taken earlier
// (etcdutl snapshot restore), as a new etcd cluster. The control plane is
// stopped around it, as upstream guides say: schedulers and
// controller-managers, then apiservers, are killed; every member is
// stopped and gets a fresh data directory restored from the snapshot (its
// name, peer URL, the initial cluster, a new cluster token; the revision
// bumped by a billion and marked compacted); the members start; the
// apiservers start and the operation waits until they are ready; the
// schedulers and controller-managers start. Watchers relist.
type RestoreOp struct {
	Snapshot string `yaml:"snapshot"`
}

// Summary names the snapshot.
func (r *RestoreOp) Summary() string { return "etcd restore from " + r.Snapshot }

// DefaultTimeout leaves room to stop and start the whole control plane.
func (r *RestoreOp) DefaultTimeout() time.Duration { return 3 * time.Minute }

// Validate checks that an earlier operation takes the snapshot (the
// decoder reports an empty name).
func (r *RestoreOp) Validate(c Checker) {
	c.Bound(r.Snapshot, snapshotType, "snapshot", "snapshot")
}

// Exec restores the snapshot bound to the name.
func (r *RestoreOp) Exec(ctx context.Context, env Env) (string, error) {
	snap, ok := env.Bindings()[r.Snapshot].(assertions.Snapshot)
	if !ok || snap.File == "" {
		return "", fmt.Errorf("restore: no snapshot %q was taken", r.Snapshot)
	}
	res, err := env.Cluster().RestoreSnapshot(ctx, cluster.Snapshot{Name: snap.Name, File: snap.File})
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(res.Members))
	for n, id := range res.Members {
		ids = append(ids, n+"="+id)
	}
	sort.Strings(ids)
	return fmt.Sprintf("restored %s (revision %d) in %s; new members %s",
		r.Snapshot, snap.Revision, res.Took.Round(time.Millisecond), strings.Join(ids, ", ")), nil
}
