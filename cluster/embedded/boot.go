package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/etcdutl"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

// The embedded backend is a lifecycle.Placement: the boot lifecycle
// decides the order, the methods below place processes.
var (
	_ lifecycle.Placement = (*Backend)(nil)
	_ lifecycle.Seeder    = (*Backend)(nil)
)

func clientTLS(caPath, cert, key string) (*tls.Config, error) {
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Prepare implements lifecycle.Placement: the state directory, ports,
// certificates, kubeconfigs and the command line of every process.
func (b *Backend) Prepare(ctx context.Context, say lifecycle.Say) (lifecycle.Plan, error) {
	if _, err := b.opts.Home.Sweep(ctx); err != nil {
		b.opts.Log.Warn("sweep orphans", "err", err)
	}
	if _, err := os.Stat(b.dir); err == nil {
		return lifecycle.Plan{}, fmt.Errorf("cluster %q: %w (kubelab down --name %s)", b.name, cluster.ErrExists, b.name)
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return lifecycle.Plan{}, fmt.Errorf("create state dir: %w", err)
	}
	b.st.Owner = os.Getpid()
	b.st.OwnerStart = procStartTime(b.st.Owner)
	if err := b.opts.Home.save(b.name, b.st); err != nil {
		return lifecycle.Plan{}, err
	}
	// Ports are picked while holding the machine-wide port book's lock and
	// recorded in it before it is released, so clusters booting side by
	// side, in this home or any other, never pick the same ones.
	book := machinePorts()
	unlock, err := book.lock()
	if err != nil {
		return lifecycle.Plan{}, err
	}
	err = b.plan(book.used())
	if err == nil {
		err = b.opts.Home.save(b.name, b.st)
	}
	if err == nil {
		err = book.record(b.dir, b.st.portList())
	}
	unlock()
	if err != nil {
		return lifecycle.Plan{}, err
	}
	t := b.st.Topology
	p := lifecycle.Plan{Etcd: controlplane.EtcdMembers(t), APIServers: controlplane.APIServers(t),
		ControllerManagers: controlplane.ControllerManagers(t), Schedulers: controlplane.Schedulers(t)}
	if b.proc(string(cluster.RoleLoadBalancer)) != nil {
		p.LoadBalancer = string(cluster.RoleLoadBalancer)
	}
	return p, nil
}

// RestoreSeed implements lifecycle.Seeder: etcdutl restores the seed
// into each member's data directory, here on this host, at once.
func (b *Backend) RestoreSeed(ctx context.Context, snapshot string) error {
	t := b.Topology()
	site := b.site()
	members := controlplane.EtcdMembers(t)
	err := b.eachMember(members, func(m string) error {
		_, err := etcdutl.Run(ctx, b.program("etcdutl"), controlplane.EtcdSeedArgs(t, site, m, snapshot, site.Etcd(m).DataDir)...)
		return err
	})
	if err != nil {
		for _, m := range members {
			_ = os.RemoveAll(site.Etcd(m).DataDir) // a member must start from nothing, not half a seed
		}
	}
	return err
}

// Start implements lifecycle.Placement.
func (b *Backend) Start(_ context.Context, names ...string) error {
	return b.start(names, nil)
}

// StartGated implements lifecycle.GatedStarter: each process starts at
// once, and its program first waits, in that process, until the
// apiserver of its --kubeconfig answers path with 200, so that its
// process start overlaps the wait. Only this start is gated: a later
// Start (a lab starting a component again) runs the program at once.
func (b *Backend) StartGated(_ context.Context, path string, names ...string) error {
	return b.start(names, func(p *procSpec) []string {
		for _, a := range p.Args {
			if kc, ok := strings.CutPrefix(a, "--kubeconfig="); ok {
				return []string{controlplane.EnvWaitForAPIServer + "=" + kc, controlplane.EnvWaitReadyz + "=" + path}
			}
		}
		return nil
	})
}

// start starts the named processes, each with the environment env adds
// (when env is not nil).
func (b *Backend) start(names []string, env func(*procSpec) []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range names {
		p := b.procLocked(n)
		if p == nil {
			return fmt.Errorf("start %s: no such component in cluster %s", n, b.name)
		}
		var more []string
		if env != nil {
			more = env(p)
		}
		if err := startProc(b.programOf(p), string(b.opts.Home), b.name, p, b.opts.Ephemeral, more...); err != nil {
			return err
		}
	}
	return b.opts.Home.save(b.name, b.st)
}

// Failed implements lifecycle.Placement: a started process that is gone.
func (b *Backend) Failed(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.st.Procs {
		if p.Virtual || p.PID == 0 || p.Stopped {
			continue
		}
		if !procAlive(p.PID, b.name, p.Name) {
			return &lifecycle.Exited{Component: p.Name, Err: fmt.Errorf("%s exited while starting%s; last lines of %s:\n%s", p.Name, exitNote(p.PID), p.Log, tail(p.Log, 15))}
		}
	}
	return nil
}

// StartNodes implements lifecycle.Placement: every Node object is
// registered with the labels, taints and capacity of the topology, then
// the kwok controller that heartbeats them starts.
func (b *Backend) StartNodes(ctx context.Context, cs kubernetes.Interface) error {
	// kwok is not in system:masters: its least-privilege role must exist
	// before it starts.
	if err := controlplane.RBAC(ctx, cs, controlplane.Kwok); err != nil {
		return err
	}
	if err := registerNodes(ctx, cs, b.st.Topology.Nodes); err != nil {
		return err
	}
	return b.Start(ctx, string(roleKwok))
}

// NodesUsable implements lifecycle.NodesUsable: a node is Ready from its
// registration (see registeredStatus), so its simulation has begun only
// once kwok holds its Lease, as a kubelet renews its own; a pod on a node
// kwok has not taken yet would wait for it. kwok takes them while the
// controller-manager lifts the nodes' taints, so this usually finds them
// all at the first look.
func (b *Backend) NodesUsable(ctx context.Context) error {
	cs, err := b.adminClient()
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range b.st.Topology.Nodes {
		want[n.Name] = true
	}
	held := 0
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // the boot's own deadline ends a wait that never succeeds
		}
		held = 0
		for _, ls := range l.Items {
			if want[ls.Name] && ls.Spec.HolderIdentity != nil && *ls.Spec.HolderIdentity != "" {
				held++
			}
		}
		return held == len(want), nil
	})
	if err != nil {
		return fmt.Errorf("kwok holds the Leases of %d of %d nodes: %w", held, len(want), err)
	}
	return nil
}

var _ lifecycle.NodesUsable = (*Backend)(nil)

// Ready implements lifecycle.Placement: the cluster is marked ready, and
// handed over to the user unless it is ephemeral.
func (b *Backend) Ready(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.Ready = true
	if !b.opts.Ephemeral {
		b.st.Owner, b.st.OwnerStart = 0, ""
	}
	return b.opts.Home.save(b.name, b.st)
}

func (b *Backend) proc(name string) *procSpec {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.procLocked(name)
}

func (b *Backend) procLocked(name string) *procSpec {
	for _, p := range b.st.Procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

var _ lifecycle.GatedStarter = (*Backend)(nil)
