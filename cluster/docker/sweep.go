package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"kubelab.dev/kubelab/internal/proc"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"k8s.io/apimachinery/pkg/util/wait"

	"kubelab.dev/kubelab/cluster"
)

// Down implements cluster.Backend: removes every container, volume and
// network labelled with the cluster's name, and the state directory.
func (b *Backend) Down(ctx context.Context) error {
	err := RemoveCluster(ctx, b.cli, b.opts.Home, b.topo.Name)
	return errors.Join(err, os.RemoveAll(b.opts.Dir))
}

// RemoveCluster removes everything labelled with a cluster's name and home.
func RemoveCluster(ctx context.Context, cli *client.Client, home, name string) error {
	return removeMatching(ctx, cli, homeFilter(home, name))
}

// RemoveLeftovers removes what is left of the cluster name of home once
// its containers are gone (removed by hand, or lost with the engine's
// data): its networks and volumes, and its state directory dir. It says
// whether there was anything to remove.
func RemoveLeftovers(ctx context.Context, home, name, dir string) (bool, error) {
	_, err := os.Stat(dir)
	found := err == nil
	dc, err := engine()
	if err != nil {
		return found, err
	}
	defer dc.Close()
	f := homeFilter(home, name)
	ns, err := dc.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return found, err
	}
	vs, err := dc.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return found, err
	}
	found = found || len(ns.Items) > 0 || len(vs.Items) > 0
	return found, errors.Join(removeMatching(ctx, dc, f), os.RemoveAll(dir))
}

// removeMatching removes the containers, volumes and networks f matches.
// One already gone is not an error: a cluster that is failing to boot
// removes its own at the same time (down --all during a boot). Such a boot
// may also create a container after the list was taken, whose volume the
// engine then refuses to remove ("volume is in use"): containers and
// volumes are removed again, for a few seconds, until none is refused.
func removeMatching(ctx context.Context, cli *client.Client, f client.Filters) error {
	var errs []error
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 6, Cap: 2 * time.Second}, func(ctx context.Context) (bool, error) {
		var inUse bool
		errs, inUse = removeContainersAndVolumes(ctx, cli, f)
		return !inUse, nil
	})
	if err != nil && len(errs) == 0 {
		errs = append(errs, err) // ctx ended before a round could say more
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err == nil {
		for _, n := range ns.Items {
			if err := removeNetwork(ctx, cli, n.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeContainersAndVolumes removes the containers f matches, then their
// volumes. It returns what failed, and whether a volume was refused
// because a container (made since the list) still uses it.
func removeContainersAndVolumes(ctx context.Context, cli *client.Client, f client.Filters) ([]error, bool) {
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return []error{err}, false
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range cs.Items {
		wg.Go(func() {
			if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	inUse := false
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err == nil {
		for _, v := range vs.Items {
			_, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true})
			switch {
			case err == nil || cerrdefs.IsNotFound(err):
			case cerrdefs.IsConflict(err):
				inUse = true
				errs = append(errs, err)
			default:
				errs = append(errs, err)
			}
		}
	}
	return errs, inUse
}

// removeNetwork removes a network whose containers were just removed.
// The engine releases a force-removed container's endpoint a moment after
// the removal returns, and refuses to remove a network with an endpoint
// ("has active endpoints"): endpoints still listed are disconnected by
// force and the removal is tried again for a few seconds.
func removeNetwork(ctx context.Context, cli *client.Client, id string) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 7, Cap: 2 * time.Second}, func(ctx context.Context) (bool, error) {
		_, last = cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
		if last == nil || cerrdefs.IsNotFound(last) {
			return true, nil
		}
		if ins, err := cli.NetworkInspect(ctx, id, client.NetworkInspectOptions{}); err == nil {
			for c := range ins.Network.Containers {
				_, _ = cli.NetworkDisconnect(ctx, id, client.NetworkDisconnectOptions{Container: c, Force: true})
			}
		}
		return false, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("remove network %s: %w", id, last)
	}
	return err
}

// Sweep removes the containers, volumes and networks of the home's
// clusters whose owner process is gone (kubelab was killed with -9) while
// they were ephemeral or still booting, and with all set, of every cluster
// of the home. It returns the names of the clusters it removed. Clusters of
// other homes are never touched.
func Sweep(ctx context.Context, home string, all bool) ([]string, error) {
	cli, err := engine()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: homeFilter(home, "")})
	if err != nil {
		return nil, err
	}
	dead := map[string]bool{}
	for _, c := range cs.Items {
		if all {
			dead[c.Labels[labelCluster]] = true
			continue
		}
		if ownerAlive(c.Labels[labelOwner]) {
			continue
		}
		handedOver := false
		if c.Labels[labelEphemeral] != "true" {
			_, err := os.Stat(filepath.Join(c.Labels[labelDir], readyMarker))
			handedOver = err == nil
		}
		if !handedOver {
			dead[c.Labels[labelCluster]] = true
		}
	}
	var names []string
	var errs []error
	for n := range dead {
		names = append(names, n)
		errs = append(errs, RemoveCluster(ctx, cli, home, n))
	}
	if all {
		// Networks and volumes left without containers.
		errs = append(errs, removeMatching(ctx, cli, homeFilter(home, "")))
	}
	sort.Strings(names)
	for _, c := range cs.Items {
		if dead[c.Labels[labelCluster]] && c.Labels[labelDir] != "" {
			_ = os.RemoveAll(c.Labels[labelDir])
		}
	}
	return names, errors.Join(errs...)
}

func ownerAlive(owner string) bool {
	pidS, start, _ := strings.Cut(owner, ":")
	pid, err := strconv.Atoi(pidS)
	if err != nil {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && errors.Is(err, syscall.ESRCH) {
		return false
	}
	return start == "" || procStart(pid) == start
}

func procStart(pid int) string { return proc.StartTime(pid) }

// Open attaches to a running docker cluster by name, from its containers'
// labels and the state directory opts.Dir.
func Open(ctx context.Context, name string, opts Options) (*Backend, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	b := &Backend{opts: opts, cli: dc.Client, ctrs: map[string]*ctr{}}
	f := homeFilter(opts.Home, name)
	cs, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	if len(cs.Items) == 0 {
		return nil, fmt.Errorf("docker cluster %q: %w", name, ErrNotFound)
	}
	ns, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil || len(ns.Items) == 0 {
		return nil, fmt.Errorf("docker cluster %q: no network: %v", name, err)
	}
	b.netID, b.netName = ns.Items[0].ID, ns.Items[0].Name
	topo := cluster.Topology{Name: name}
	b.access = cluster.Access{Kubeconfig: filepath.Join(opts.Dir, "admin.kubeconfig"), EtcdEndpoints: map[string]string{}, APIServers: map[string]string{}}
	for _, c := range cs.Items {
		x := &ctr{name: c.Labels[labelComponent], role: c.Labels[labelRole], id: c.ID, ports: map[string]string{}, stopped: c.State != "running"}
		b.ctrs[x.name] = x
		if err := b.refreshPorts(ctx, x); err != nil {
			return nil, err
		}
		switch cluster.Role(x.role) {
		case cluster.RoleEtcd:
			topo.Etcd++
		case cluster.RoleAPIServer:
			topo.APIServers++
		case cluster.RoleScheduler:
			topo.Schedulers++
		case cluster.RoleControllerManager:
			topo.ControllerManagers++
		case cluster.RoleNode:
			topo.Nodes = append(topo.Nodes, cluster.NodeSpec{Name: x.name})
		}
	}
	sort.Slice(topo.Nodes, func(i, j int) bool { return topo.Nodes[i].Name < topo.Nodes[j].Name })
	b.topo = topo.WithDefaults()
	b.access.EtcdDial = b.dialByName
	pk := &pkiDir{dir: filepath.Join(opts.Dir, "pki")}
	if b.access.EtcdTLS, err = tlsConfig(pk.path("etcd-ca.crt"), pk.path("etcd-client.crt"), pk.path("etcd-client.key")); err != nil {
		return nil, fmt.Errorf("docker cluster %q: state directory %s: %w", name, opts.Dir, err)
	}
	return b, nil
}

// ErrNotFound is returned by Open for a cluster that does not exist.
var ErrNotFound = errors.New("no such cluster")

// HomeID identifies a kubelab home (its absolute path) on a Docker engine
// that several users or homes share.
func HomeID(home string) string {
	sum := sha256.Sum256([]byte(canonical(home)))
	return hex.EncodeToString(sum[:6])
}

// canonical is path made absolute with its symbolic links resolved, so
// that every path that reaches a home names it the same: the part that
// does not exist yet (a home about to be made) is kept as written.
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// homeFilter matches the objects of one home, and of one cluster of it
// when name is set.
func homeFilter(home, name string) client.Filters {
	f := client.Filters{}.Add("label", labelHome+"="+HomeID(home))
	if name != "" {
		f.Add("label", labelCluster+"="+name)
	}
	return f
}

// Running lists the docker clusters, of any home, with running
// containers on the engine ($DOCKER_HOST or the default socket); see
// cluster.Running.
func Running(ctx context.Context) ([]cluster.Running, error) {
	cli, err := engine()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: client.Filters{}.Add("label", labelManaged)})
	if err != nil {
		return nil, fmt.Errorf("list kubelab's containers: %w", err)
	}
	var each []cluster.Running
	for _, c := range cs.Items {
		each = append(each, cluster.Running{Backend: "docker", Name: c.Labels[labelCluster], Where: c.Labels[labelDir]})
	}
	return cluster.Tally(each), nil
}
