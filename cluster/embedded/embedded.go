// Package embedded is kubelab's default backend: the real etcd,
// kube-apiserver, kube-scheduler and kube-controller-manager run as
// supervised local processes of the kubelab binary on 127.0.0.1, with real
// TLS, and worker nodes are simulated by kwok (one kwok controller process
// per node, so a node taken down really stops heartbeating).
//
// No Docker and no root are needed. Every process is tagged with its
// cluster's name in its environment, so orphans left by a killed kubelab are
// found and removed by the next run (Home.Sweep).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/lifecycle"
	"kubelab.dev/kubelab/cluster/seed"
	"kubelab.dev/kubelab/internal/binaries"
	"kubelab.dev/kubelab/internal/fileid"
)

// Options configure a cluster of this backend.
type Options struct {
	// Home holds cluster state; DefaultHome() when empty.
	Home Home
	// Binary is the kubelab executable that carries the components;
	// os.Executable() when empty.
	Binary string
	// Components is the executable that runs the cluster's processes
	// (`component NAME ARGS...`) that have none of their own next to
	// Binary (see binaries.Program: kubelab-etcd, kubelab-apiserver, ...
	// start faster, as each carries one program): kubelab-components,
	// else Binary.
	Components string
	// Ephemeral clusters die with this process (labs, tests); others stay up
	// after `kubelab up` returns.
	Ephemeral bool
	// Seeds is the seed cache (see cluster/seed): $KUBELAB_SEEDS when
	// empty, else the home's seeds directory.
	Seeds string
	// Log receives debug logs.
	Log *slog.Logger
}

// Backend is a cluster of local processes.
type Backend struct {
	opts Options
	name string
	dir  string

	mu sync.Mutex
	st *state
}

// New prepares a cluster from a topology; Up creates it.
func New(t cluster.Topology, opts Options) (*Backend, error) {
	t = t.WithDefaults()
	if errs := t.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Backend{opts: opts, name: t.Name, dir: opts.Home.Dir(t.Name), st: &state{Topology: t}}, nil
}

// Open attaches to an existing cluster by name.
func Open(name string, opts Options) (*Backend, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := opts.Home.load(name)
	if err != nil {
		return nil, err
	}
	return &Backend{opts: opts, name: name, dir: opts.Home.Dir(name), st: st}, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Home == "" {
		o.Home = DefaultHome()
	}
	if o.Seeds == "" {
		o.Seeds = seed.DirOf(string(o.Home))
	}
	if o.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("find kubelab binary: %w", err)
		}
		o.Binary = self
	}
	if o.Components == "" {
		o.Components = binaries.ComponentsOf(o.Binary)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Name implements cluster.Backend.
func (b *Backend) Name() string { return "embedded" }

// Topology implements cluster.Backend.
func (b *Backend) Topology() cluster.Topology { return b.st.Topology }

// Dir is the cluster's state directory.
func (b *Backend) Dir() string { return b.dir }

// Up implements cluster.Backend through the one boot lifecycle (see
// cluster/lifecycle). On failure, or when ctx is cancelled, everything
// started so far is removed before Up returns.
func (b *Backend) Up(ctx context.Context, progress func(cluster.Event)) error {
	// A lab that sets one is refused before (it needs node internals);
	// this catches the other ways in (a drill's cluster, a topology file).
	if i := b.st.Topology.ProxyModeNode(); i >= 0 {
		n := b.st.Topology.Nodes[i]
		return fmt.Errorf("embedded backend: node %s sets proxyMode %s: %w (its nodes are simulated by kwok and run no kube-proxy; the docker backend's do)", n.Name, n.ProxyMode, cluster.ErrTopology)
	}
	opts := lifecycle.Options{Seeds: seed.Cache{Dir: b.opts.Seeds}, Fresh: b.st.Topology.Fresh || seed.FreshFromEnv(), Binary: b.program("prune-snapshot")}
	key, err := b.seedKey()
	if err != nil {
		b.opts.Log.Warn("no seed", "err", err)
		opts.Seeds = seed.Cache{}
	}
	opts.SeedKey = key
	return lifecycle.Up(ctx, b, progress, opts)
}

// seedKey is the key of this cluster's seed: the builds of the
// executables that run its apiservers, which write the seed's objects,
// and its etcd members, which store them.
func (b *Backend) seedKey() (string, error) {
	etcd, err := fileid.Build(b.program("etcd"))
	if err != nil {
		return "", err
	}
	return seed.Key(b.program("kube-apiserver"), "backend=embedded", "etcd="+etcd)
}

// programOf is the executable that runs p (`component NAME ARGS...`).
func (b *Backend) programOf(p *procSpec) string {
	if len(p.Args) > 1 && p.Args[0] == "component" {
		return b.program(p.Args[1])
	}
	return b.opts.Components
}

// program is the executable that runs component: its own next to
// Binary (see binaries.Program), else Components.
func (b *Backend) program(component string) string {
	if p, ok := binaries.Program(b.opts.Binary, component); ok {
		return p
	}
	return b.opts.Components
}

// Down implements cluster.Backend. A cluster that goes away keeps
// nothing, so nothing needs a graceful stop: every process is killed at
// once (an apiserver given SIGTERM spends seconds draining requests that
// no one will make again), Down waits until each is gone, then removes the
// state directory and releases the ports.
func (b *Backend) Down(ctx context.Context) error {
	b.mu.Lock()
	procs := append([]*procSpec(nil), b.st.Procs...)
	b.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		if p.Virtual || p.PID == 0 {
			continue
		}
		wg.Go(func() { errs[i] = kill(ctx, p.PID, b.name, p.Name) })
	}
	wg.Wait()
	return errors.Join(append(errs, b.opts.Home.remove(ctx, b.name))...)
}

// Components implements cluster.Backend.
func (b *Backend) Components(ctx context.Context) ([]cluster.Component, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]cluster.Component, 0, len(b.st.Procs))
	kwokUp := false
	for _, p := range b.st.Procs {
		if cluster.Role(p.Role) == roleKwok {
			kwokUp = procAlive(p.PID, b.name, p.Name)
		}
	}
	for _, p := range b.st.Procs {
		c := cluster.Component{Name: p.Name, Role: cluster.Role(p.Role), Endpoint: p.Endpoint, Log: p.Log}
		switch {
		case p.Virtual && p.Stopped:
			c.State = cluster.StateStopped
		case p.Virtual && kwokUp:
			c.State = cluster.StateRunning
		case p.Virtual:
			c.State = cluster.StateExited
		case procAlive(p.PID, b.name, p.Name):
			c.PID = p.PID
			c.State = cluster.StateRunning
			if procState(p.PID) == "T" {
				c.State = cluster.StatePaused
			}
		case p.Stopped:
			c.State = cluster.StateStopped
		default:
			c.State = cluster.StateExited
			c.Exit = strings.Trim(exitNote(p.PID), " ()")
		}
		out = append(out, c)
	}
	return out, nil
}

// Act implements cluster.Backend.
func (b *Backend) Act(ctx context.Context, name string, a cluster.Action) error {
	if node, daemon, ok := cluster.SplitNodeDaemon(name); ok {
		return fmt.Errorf("%s %s: node %s is simulated by kwok: it runs no %s (no kubelet, containerd or kube-proxy): %w",
			a, name, node, daemon, cluster.ErrNoNodeInternals)
	}
	b.mu.Lock()
	var p *procSpec
	for _, x := range b.st.Procs {
		if x.Name == name {
			p = x
		}
	}
	b.mu.Unlock()
	if p == nil {
		return fmt.Errorf("no component %q in cluster %s", name, b.name)
	}
	if p.Virtual {
		return b.actOnNode(ctx, p, a)
	}
	var err error
	switch a {
	case cluster.Kill:
		err = kill(ctx, p.PID, b.name, p.Name)
		b.setStopped(p, true)
	case cluster.Stop:
		err = terminate(ctx, p.PID, b.name, p.Name, graceful)
		b.setStopped(p, true)
	case cluster.Start:
		err = b.startIfDown(p)
	case cluster.Restart:
		if err = terminate(ctx, p.PID, b.name, p.Name, graceful); err == nil {
			b.setStopped(p, true)
			err = b.startIfDown(p)
		}
	case cluster.Pause, cluster.Resume:
		if !procAlive(p.PID, b.name, p.Name) {
			return fmt.Errorf("%s %s: not running", a, name)
		}
		sig := syscallSIGSTOP
		if a == cluster.Resume {
			sig = syscallSIGCONT
		}
		err = signal(p.PID, sig)
	case cluster.Partition, cluster.Heal:
		return fmt.Errorf("%s %s: %w (the embedded backend's processes share the host's loopback; use --backend docker)", a, name, cluster.ErrUnsupported)
	default:
		return fmt.Errorf("unknown action %q", a)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", a, name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opts.Home.save(b.name, b.st)
}

func (b *Backend) setStopped(p *procSpec, v bool) {
	b.mu.Lock()
	p.Stopped = v
	b.mu.Unlock()
}

func (b *Backend) startIfDown(p *procSpec) error {
	if procAlive(p.PID, b.name, p.Name) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return startProc(b.programOf(p), string(b.opts.Home), b.name, p, b.opts.Ephemeral)
}

// Access implements cluster.Backend.
func (b *Backend) Access() cluster.Access {
	b.mu.Lock()
	defer b.mu.Unlock()
	acc := cluster.Access{
		Kubeconfig:     b.st.Files["kubeconfig"],
		EtcdEndpoints:  map[string]string{},
		APIServers:     map[string]string{},
		Serving:        map[string]string{},
		AuditLogs:      map[string]string{},
		SchedulingLogs: map[string]string{},
	}
	for _, p := range b.st.Procs {
		switch cluster.Role(p.Role) {
		case cluster.RoleControllerManager:
			acc.Serving[p.Name] = p.Endpoint
		case cluster.RoleEtcd:
			acc.EtcdEndpoints[p.Name] = p.Endpoint
			if p.HTTP != "" {
				acc.Serving[p.Name] = p.HTTP
			}
		case cluster.RoleAPIServer:
			acc.APIServers[p.Name] = p.Endpoint
			if b.st.Topology.Audited() {
				acc.AuditLogs[p.Name] = auditLog(b.dir, p.Name)
			}
		case cluster.RoleScheduler:
			acc.Serving[p.Name] = p.Endpoint
			if b.st.Topology.Scheduler.Recorded() {
				acc.SchedulingLogs[p.Name] = schedulingLog(b.dir, p.Name)
			}
		}
	}
	tlsCfg, err := clientTLS(b.st.Files["etcd-ca"], b.st.Files["etcd-client.crt"], b.st.Files["etcd-client.key"])
	if err == nil {
		acc.EtcdTLS = tlsCfg
	} else {
		b.opts.Log.Warn("etcd client TLS", "err", err)
	}
	return acc
}

func itoa(i int) string { return strconv.Itoa(i) }

var _ cluster.Etcdctler = (*Backend)(nil)

// EtcdctlEnv points etcdctl at the cluster's members.
func (b *Backend) EtcdctlEnv() map[string]string {
	var eps []string
	for _, ep := range b.Access().EtcdEndpoints {
		eps = append(eps, ep)
	}
	sort.Strings(eps)
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]string{"ETCDCTL_ENDPOINTS": strings.Join(eps, ","),
		"ETCDCTL_CACERT": b.st.Files["etcd-ca"], "ETCDCTL_CERT": b.st.Files["etcd-client.crt"], "ETCDCTL_KEY": b.st.Files["etcd-client.key"]}
}
