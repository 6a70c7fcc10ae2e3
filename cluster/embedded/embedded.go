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
	"time"

	"kubelab.dev/kubelab/cluster"
)

// Options configure a cluster of this backend.
type Options struct {
	// Home holds cluster state; DefaultHome() when empty.
	Home Home
	// Binary is the kubelab executable that carries the components;
	// os.Executable() when empty.
	Binary string
	// Ephemeral clusters die with this process (labs, tests); others stay up
	// after `kubelab up` returns.
	Ephemeral bool
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
	if o.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("find kubelab binary: %w", err)
		}
		o.Binary = self
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

// Up implements cluster.Backend. On failure, or when ctx is cancelled,
// everything started so far is removed before Up returns.
func (b *Backend) Up(ctx context.Context, progress func(cluster.Event)) (err error) {
	if progress == nil {
		progress = func(cluster.Event) {}
	}
	start := time.Now()
	say := func(comp, format string, args ...any) {
		progress(cluster.Event{Component: comp, Message: fmt.Sprintf(format, args...), Elapsed: time.Since(start)})
	}
	if _, err := b.opts.Home.Sweep(ctx); err != nil {
		b.opts.Log.Warn("sweep orphans", "err", err)
	}
	if _, err := os.Stat(b.dir); err == nil {
		return fmt.Errorf("cluster %q already exists (kubelab down --name %s)", b.name, b.name)
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	b.st.Owner = os.Getpid()
	b.st.OwnerStart = procStartTime(b.st.Owner)
	if err := b.opts.Home.save(b.name, b.st); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := b.Down(dctx); derr != nil {
				err = errors.Join(err, fmt.Errorf("clean up after failed up: %w", derr))
			}
		}
	}()
	say("cluster", "generating certificates and plan")
	// Ports are picked while holding the machine-wide port book's lock and
	// recorded in it before it is released, so clusters booting side by
	// side, in this home or any other, never pick the same ones.
	book := machinePorts()
	unlock, err := book.lock()
	if err != nil {
		return err
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
		return err
	}
	if err := b.boot(ctx, say); err != nil {
		return err
	}
	b.mu.Lock()
	b.st.Ready = true
	if !b.opts.Ephemeral {
		b.st.Owner, b.st.OwnerStart = 0, ""
	}
	err = b.opts.Home.save(b.name, b.st)
	b.mu.Unlock()
	say("cluster", "ready")
	return err
}

// Down implements cluster.Backend: stop control-plane clients first, then
// apiservers, then etcd (apiservers hang on shutdown without etcd), then
// remove the state directory.
func (b *Backend) Down(ctx context.Context) error {
	b.mu.Lock()
	procs := append([]*procSpec(nil), b.st.Procs...)
	b.mu.Unlock()
	order := [][]cluster.Role{
		{roleKwok, cluster.RoleScheduler, cluster.RoleControllerManager, cluster.RoleLoadBalancer},
		{cluster.RoleAPIServer},
		{cluster.RoleEtcd},
	}
	var errs []error
	for _, roles := range order {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, p := range procs {
			if !hasRole(roles, cluster.Role(p.Role)) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Labs are throwaway: apiservers take ~12 s to drain on
				// SIGTERM, so give them a short grace and then kill.
				if err := terminate(ctx, p.PID, b.name, p.Name, 3*time.Second); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	if err := b.opts.Home.remove(ctx, b.name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func hasRole(roles []cluster.Role, r cluster.Role) bool {
	for _, x := range roles {
		if x == r {
			return true
		}
	}
	return false
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
	return startProc(b.opts.Binary, string(b.opts.Home), b.name, p, b.opts.Ephemeral)
}

// Access implements cluster.Backend.
func (b *Backend) Access() cluster.Access {
	b.mu.Lock()
	defer b.mu.Unlock()
	acc := cluster.Access{
		Kubeconfig:     b.st.Files["kubeconfig"],
		EtcdEndpoints:  map[string]string{},
		APIServers:     map[string]string{},
		AuditLogs:      map[string]string{},
		SchedulingLogs: map[string]string{},
	}
	for _, p := range b.st.Procs {
		switch cluster.Role(p.Role) {
		case cluster.RoleEtcd:
			acc.EtcdEndpoints[p.Name] = p.Endpoint
		case cluster.RoleAPIServer:
			acc.APIServers[p.Name] = p.Endpoint
			if b.st.Topology.Audited() {
				acc.AuditLogs[p.Name] = auditLog(b.dir, p.Name)
			}
		case cluster.RoleScheduler:
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
