// Package lifecycle is the one boot lifecycle of kubelab's clusters, the
// shape of kind's create actions: ordered stages, the readiness check of
// each, the overlap of stages that do not depend on each other, the
// seeded control plane, the cleanup after a failed boot and the progress
// lines. Backends (cluster/embedded, cluster/docker) implement Placement:
// they place components and nodes (processes, containers) and say where
// each is; they keep no boot order of their own.
//
// The stages:
//
//  1. prepare: certificates, addresses, state (the backend);
//  2. seed: restore the seed (an etcd snapshot of a freshly bootstrapped
//     control plane, see cluster/seed) into every etcd member, unless the
//     cluster boots fresh;
//  3. etcd and the apiservers start at once (an apiserver retries etcd
//     until it answers), then their load balancer; where starting a
//     component takes long (containers), the controller-managers and
//     schedulers start then too, each waiting for an apiserver's /readyz
//     itself, and so do the nodes (EarlyNodes),
//     unless this boot takes the seed (nothing but the apiservers may
//     write before it is taken);
//  4. once an apiserver is ready (on a fresh boot: every apiserver, since
//     the controller-manager exits if RBAC's bootstrap roles are not
//     served yet) and the balancer serves, a fresh single-apiserver boot
//     takes the seed, then the controller-managers, schedulers, nodes and
//     the DNS addon start at once (on a seeded boot, the
//     controller-managers gated on /healthz, see startControllers, and
//     their ServiceAccounts are made ahead of them, see
//     createControllerAccounts);
//  5. the cluster is usable when every apiserver is ready, every node is
//     Ready with a pod range, the default ServiceAccount exists (the
//     controller-manager made it), so does the kubernetes Service, and
//     cluster DNS serves (the scheduler placed it).
//
// Every wait fails fast when a component exits on its own, naming it with
// the last lines of its log.
package lifecycle

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/etcdutl"
	"kubelab.dev/kubelab/cluster/internal/probe"
	"kubelab.dev/kubelab/cluster/seed"
)

// Say reports progress of one component.
type Say func(component, format string, args ...any)

// Plan names the components a placement runs, by role.
type Plan struct {
	Etcd, APIServers, ControllerManagers, Schedulers []string
	// LoadBalancer names the L4 balancer in front of the apiservers; ""
	// where clients reach the one apiserver directly.
	LoadBalancer string
	// ControllersWait says that the controller-managers and schedulers
	// wait for an apiserver's /readyz before their programs run
	// (controlplane.EnvWaitForAPIServer): they start with etcd and the
	// apiservers, where starting one takes long (a container).
	ControllersWait bool
	// NodesReportNotReady says that the nodes report NotReady before they
	// are Ready (real kubelets, until their pod network is set up): the
	// node lifecycle controller may then taint a node that just turned
	// Ready once more, from the older state its cache still held, and the
	// boot waits for every node to stay usable (nodesSettle). Nodes that
	// register without conditions and are then only ever Ready (kwok's)
	// give it nothing to taint them from.
	NodesReportNotReady bool
}

// Placement is the part of a backend the lifecycle drives.
type Placement interface {
	// Topology is the defaulted topology of the cluster.
	Topology() cluster.Topology
	// Access says where the started components are (valid for a
	// component once it started).
	Access() cluster.Access
	// Prepare makes what the components need before any starts
	// (certificates, addresses, state, networks, images) and says what
	// it will run.
	Prepare(ctx context.Context, say Say) (Plan, error)
	// Start starts the named components at once.
	Start(ctx context.Context, names ...string) error
	// Failed is nil while every started component runs; otherwise it
	// names one that exited on its own, with the last lines of its log,
	// as an *Exited.
	Failed(ctx context.Context) error
	// StartNodes places the worker nodes; an apiserver serves.
	StartNodes(ctx context.Context, cs kubernetes.Interface) error
	// Ready is called once the cluster is usable.
	Ready(ctx context.Context) error
	// Down removes everything Prepare and Start made.
	Down(ctx context.Context) error
}

// Exited is the error of Placement.Failed: Component exited on its own;
// Err says how, with the last lines of its log.
type Exited struct {
	Component string
	Err       error
}

func (e *Exited) Error() string { return e.Err.Error() }
func (e *Exited) Unwrap() error { return e.Err }

// leaseLost is what a scheduler or controller-manager logs before it
// exits for losing its leader Lease ("Leaderelection lost",
// "leaderelection lost/stopped").
var leaseLost = regexp.MustCompile(`(?i)leaderelection lost`)

// actor is a Placement that starts a component that exited again
// (cluster.Backend's Act).
type actor interface {
	Act(ctx context.Context, name string, a cluster.Action) error
}

// maxBootRestarts bounds how often one component is started again during
// a boot (see boot.failed).
const maxBootRestarts = 3

// EarlyNodes is a Placement whose nodes take seconds to start before they
// use an apiserver (node containers start containerd and load images):
// PlaceNodes starts them together with etcd and the apiservers, and their
// kubelets register once an apiserver serves. StartNodes still runs when
// an apiserver serves, for what needs the API.
type EarlyNodes interface {
	PlaceNodes(ctx context.Context) error
}

// GatedStarter is a Placement that can start a component whose program
// first waits, in its own process, until an apiserver answers path with
// 200 (controlplane.EnvWaitForAPIServer): the process start then overlaps
// that wait. Later starts of the component are not gated.
type GatedStarter interface {
	StartGated(ctx context.Context, path string, names ...string) error
}

// NodesUsable is a Placement with work to do, or a check of its own to
// make, as soon as every node is usable, while the boot still waits for
// the rest (cluster DNS, the default ServiceAccount): the docker backend
// routes the pod ranges between its nodes then, not after the last wait;
// the embedded backend waits until kwok holds every node's Lease.
type NodesUsable interface {
	NodesUsable(ctx context.Context) error
}

// Seeder is a Placement that can start its etcd members from a seed.
// Clusters of other placements always boot fresh.
type Seeder interface {
	// RestoreSeed fills every etcd member's data from snapshot, before
	// the members first start. On failure no member is left with part of
	// it.
	RestoreSeed(ctx context.Context, snapshot string) error
}

// Options configure one boot.
type Options struct {
	// Seeds is the seed cache; a zero Cache boots every cluster fresh.
	Seeds seed.Cache
	// SeedKey is the key of this cluster's seed (see seed.Key).
	SeedKey string
	// Fresh boots from nothing even where a seed exists (and takes none).
	Fresh bool
	// Timeout bounds each stage's wait (default 90s).
	Timeout time.Duration
	// Binary carries `component prune-snapshot` (etcd's executable, or
	// the components'): a seed is taken only with it.
	Binary string
}

// seedPrune are the keys a seed is stored without: those that name the
// apiserver that took it. A cluster restored from the seed would route
// its kubernetes Service to that address until the address's master lease
// expired (15 s and more), and list a stale apiserver identity; its own
// apiservers write theirs as they start.
var seedPrune = []string{
	"/registry/masterleases/",
	"/registry/services/endpoints/default/kubernetes",
	"/registry/endpointslices/default/kubernetes",
	"/registry/leases/kube-system/apiserver-",
}

// ServingReadyz is the readiness check of an apiserver whose etcd already
// holds the bootstrap (restored from a seed, or an apiserver that restarts
// in a running cluster): every check of /readyz but the two bootstrap
// hooks whose objects are there (RBAC's roles and bindings, the system
// priority classes). Upstream runs each after a fixed first second
// (wait.Poll), then only confirms, object by object, what is there: ~1.5 s
// during which the apiserver already serves, authorizes with those very
// roles, and the controller-manager can start. The load balancers check
// it too.
const ServingReadyz = "/readyz?exclude=poststarthook/rbac/bootstrap-roles&exclude=poststarthook/scheduling/bootstrap-system-priority-classes"

// EventServing is the progress message sent when the apiservers serve
// kubelab's client and the controller-managers, schedulers, nodes and DNS
// addon start: the end of the control plane's own boot.
const EventServing = "apiservers serve: starting controller-managers, schedulers, nodes and DNS"

// EventControlPlaneReady is the progress message sent when every wait of
// the boot is over: every apiserver ready, every node Ready and taken
// over, the default ServiceAccount made, cluster DNS answering.
const EventControlPlaneReady = "control plane and nodes ready"

// EventServiceAccount and EventDNS are the progress messages sent when
// the controller-manager has made the default ServiceAccount (no Pod can
// be created before it) and when cluster DNS first answers; with the
// nodes' EventNodesReady lines (a format: Ready nodes, all nodes), the
// phases of a boot after the apiservers serve.
const (
	EventServiceAccount = "the default ServiceAccount exists"
	EventDNS            = "cluster DNS answers"
	EventNodesReady     = "nodes Ready %d/%d"
)

// EventHealthz is the progress message sent when /healthz first passes:
// the apiserver's bootstrap post-start hooks are done. The
// controller-manager waits for it before it starts a controller. On a
// seeded boot it comes about a second after the apiservers serve: the
// hooks that confirm the seeded RBAC objects and priority classes sleep
// a fixed second (upstream's wait.Poll) before their first look.
const EventHealthz = "/healthz passes: the bootstrap hooks are done, the controller-manager starts"

// Up boots the cluster of p. On failure, or when ctx is cancelled,
// everything started so far is removed before Up returns.
func Up(ctx context.Context, p Placement, progress func(cluster.Event), opts Options) (err error) {
	if progress == nil {
		progress = func(cluster.Event) {}
	}
	if opts.Timeout == 0 {
		opts.Timeout = 90 * time.Second
	}
	start := time.Now()
	say := func(comp, format string, args ...any) {
		progress(cluster.Event{Component: comp, Message: fmt.Sprintf(format, args...), Elapsed: time.Since(start)})
	}
	defer func() {
		if err != nil && !errors.Is(err, cluster.ErrExists) {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := p.Down(dctx); derr != nil {
				err = errors.Join(err, fmt.Errorf("clean up after failed up: %w", derr))
			}
		}
	}()
	b := &boot{p: p, opts: opts, say: say}
	return b.run(ctx)
}

type boot struct {
	p    Placement
	opts Options
	say  Say
	plan Plan
	// seeded is set when the members start from a seed; taking when
	// this boot takes the seed (no controller or node may write before);
	// took once it has.
	seeded, taking, took bool
	admin                *http.Client
	cs                   kubernetes.Interface
	// server is where the admin kubeconfig reaches the apiservers (the
	// balancer, or the one apiserver).
	server string
	// restarts counts, per component, how often failed started it again.
	restartMu sync.Mutex
	restarts  map[string]int
}

func (b *boot) run(ctx context.Context) (err error) {
	say := b.say
	say("cluster", "generating certificates and plan")
	if b.plan, err = b.p.Prepare(ctx, say); err != nil {
		return err
	}
	b.restoreSeed(ctx)

	// etcd and the apiservers first, as the apiservers' start is the
	// longest wait of the boot (measured on docker: starting every
	// container at once made the apiserver ready 1.3 s later); then at
	// once their balancer, the controllers that gate themselves until an
	// apiserver is ready, and the nodes placed early.
	core := append(append([]string{}, b.plan.Etcd...), b.plan.APIServers...)
	var next []string
	if b.plan.LoadBalancer != "" {
		next = append(next, b.plan.LoadBalancer)
	}
	rest := append(append([]string{}, b.plan.ControllerManagers...), b.plan.Schedulers...)
	if b.plan.ControllersWait && !b.taking {
		next, rest = append(next, rest...), nil
	}
	if err := b.p.Start(ctx, core...); err != nil {
		return err
	}
	// etcd's quorum is watched from here, while the rest starts: on docker
	// the next containers take seconds to start, and the leader came long
	// before them (the phases table showed it after them).
	// It ends before the boot does: none of its progress comes after.
	ectx, ecancel := context.WithCancel(ctx)
	etcdUp, etcdDone := make(chan error, 1), make(chan struct{})
	go func() { defer close(etcdDone); etcdUp <- b.waitEtcd(ectx) }()
	defer func() { ecancel(); <-etcdDone }()
	// Nodes placed early are placed in the background; whatever ends the
	// boot waits for that to end first, so that the cleanup after a
	// failed boot finds every node it started.
	var placeErr error
	placed := make(chan struct{})
	en, early := b.p.(EarlyNodes)
	if early && !b.taking {
		pctx, cancel := context.WithCancel(ctx)
		defer func() {
			if err != nil {
				cancel()
			}
			<-placed
			cancel()
		}()
		say("nodes", "placing %d node(s): they register once an apiserver serves", len(b.p.Topology().Nodes))
		go func() { placeErr = en.PlaceNodes(pctx); close(placed) }()
	} else {
		close(placed)
	}
	if len(next) > 0 {
		if err := b.p.Start(ctx, next...); err != nil {
			return err
		}
	}
	if err := b.clients(); err != nil {
		return err
	}
	// A fresh boot starts the rest once every apiserver bootstrapped RBAC
	// (the controller-manager exits if it cannot read what it needs); a
	// seeded one as soon as one apiserver is ready.
	readyz := "/readyz"
	if b.seeded {
		readyz = ServingReadyz
		say("kube-apiserver", "waiting for /readyz of one apiserver (seeded: but for the bootstrap hooks, whose objects the seed holds)")
		err = b.waitAny(ctx, readyz, b.plan.APIServers)
	} else {
		say("kube-apiserver", "waiting for /readyz (etcd connection, RBAC bootstrap)")
		err = b.waitAll(ctx, readyz, b.plan.APIServers)
	}
	if err != nil {
		return err
	}
	if err := <-etcdUp; err != nil {
		return err
	}
	if lb := b.plan.LoadBalancer; lb != "" {
		// kubelab's own client goes through the balancer, which takes an
		// apiserver into rotation once its health check passes.
		say(lb, "waiting for /readyz through the load balancer")
		if err := b.waitHTTP(ctx, lb, b.server+readyz); err != nil {
			return err
		}
	}
	if b.taking {
		b.takeSeed(ctx)
	}

	// Everything that only needs an apiserver, at once.
	say("cluster", EventServing)
	g, gctx := errgroup.WithContext(ctx)
	if len(rest) > 0 {
		g.Go(func() error { return b.startControllers(gctx, rest) })
	}
	g.Go(func() error {
		<-placed
		if placeErr != nil {
			return placeErr
		}
		if !early || b.taking {
			say("nodes", "placing %d node(s)", len(b.p.Topology().Nodes))
		}
		if early && b.taking {
			if err := en.PlaceNodes(gctx); err != nil {
				return err
			}
		}
		return b.p.StartNodes(gctx, b.cs)
	})
	// The DNS addon's Deployment waits for nodes to be scheduled on.
	g.Go(func() error { return controlplane.InstallDNS(gctx, b.cs) })
	// The controller-manager makes its ServiceAccounts in this boot when
	// none are recorded with the seed: the boot records them then.
	recordAccounts := b.took
	if b.seeded {
		if names := b.opts.Seeds.ControllerAccounts(b.opts.SeedKey); len(names) == 0 {
			recordAccounts = true
		} else {
			g.Go(func() error { b.createControllerAccounts(gctx, names); return nil })
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}

	// Usable: every wait at once, failing fast if a component exits.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 1)
	go func() { failed <- b.watchFailures(wctx) }()
	healthz := make(chan struct{})
	go func() { defer close(healthz); b.reportHealthz(wctx) }()
	g, gctx = errgroup.WithContext(wctx)
	g.Go(func() error { return b.waitAll(gctx, readyz, b.plan.APIServers) })
	// The nodes, then what cannot come before them. The controller-manager
	// untaints the nodes and makes the default ServiceAccount (without
	// which no Pod can be created) in the same moments, and cluster DNS
	// serves only once a node took its Pod: asked from here, the first
	// answers come within a short poll, where a poll running since the
	// apiservers served had backed off to 200 ms.
	say("cluster", "waiting for the controller-manager to create the default ServiceAccount")
	say("coredns", "waiting for cluster DNS (the coredns Deployment)")
	g.Go(func() error {
		if err := b.waitNodes(gctx); err != nil {
			return err
		}
		// Alongside the last waits, which need no more of the nodes than
		// that they are usable (the docker backend's routes took 0.4-0.9 s
		// before the ServiceAccount and DNS waits began).
		if nu, ok := b.p.(NodesUsable); ok {
			g.Go(func() error {
				nctx, cancel := context.WithTimeout(gctx, b.opts.Timeout)
				defer cancel()
				return nu.NodesUsable(nctx)
			})
		}
		err := b.poll(gctx, "the default ServiceAccount", func(ctx context.Context) error {
			_, err := b.cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		if err != nil {
			return err
		}
		say("cluster", EventServiceAccount)
		if err := controlplane.WaitDNS(gctx, b.cs, b.opts.Timeout); err != nil {
			return err
		}
		say("coredns", EventDNS)
		return nil
	})
	g.Go(func() error {
		// In-cluster clients reach the apiservers through the kubernetes
		// Service, which an apiserver's bootstrap controller creates
		// shortly after it serves (a seeded apiserver may not have yet).
		return b.poll(gctx, "the kubernetes Service", b.kubernetesService)
	})
	werr := g.Wait()
	cancel()
	<-healthz
	if ferr := <-failed; ferr != nil {
		return ferr // the component that died says more than the wait it broke
	}
	if werr != nil {
		return werr
	}
	say("cluster", EventControlPlaneReady)
	if recordAccounts {
		b.recordControllerAccounts(ctx)
	}
	if err := b.p.Ready(ctx); err != nil {
		return err
	}
	say("cluster", "ready")
	return nil
}

// startControllers starts the controller-managers and schedulers of
// names. On a seeded boot of a GatedStarter, the controller-managers
// start gated on /healthz: the upstream controller-manager first waits
// for it (WaitForAPIServer), polling once a second, and a seeded
// apiserver fails it for the second its bootstrap hooks sleep before they
// find their objects. Started ungated, the controller-manager's first
// poll fell in that second and it slept a whole one more (seen in its
// log: caches synced, then nothing for 0.97 s); gated, its process waits
// for /healthz itself (every 20 ms), its start overlapping the hooks'
// second. A fresh boot gets here after every /readyz, which includes
// those hooks; the docker backend gates its controllers itself
// (Plan.ControllersWait).
func (b *boot) startControllers(ctx context.Context, names []string) error {
	gs, ok := b.p.(GatedStarter)
	if !ok || !b.seeded {
		return b.p.Start(ctx, names...)
	}
	var now, gated []string
	for _, n := range names {
		if slices.Contains(b.plan.ControllerManagers, n) {
			gated = append(gated, n)
		} else {
			now = append(now, n)
		}
	}
	if len(now) > 0 {
		if err := b.p.Start(ctx, now...); err != nil {
			return err
		}
	}
	if len(gated) == 0 {
		return nil
	}
	return gs.StartGated(ctx, "/healthz", gated...)
}

// restoreSeed restores the seed into the etcd members where there is one
// (and the cluster does not boot fresh). A seed that is corrupt or will not
// restore is discarded with a progress line; the cluster then boots fresh
// and takes a new one.
func (b *boot) restoreSeed(ctx context.Context) {
	if _, ok := b.p.(Seeder); !ok || b.opts.Seeds.Dir == "" || b.opts.SeedKey == "" {
		b.opts.Seeds = seed.Cache{} // neither restored nor taken
		return
	}
	if b.opts.Fresh {
		b.say("etcd", "booting fresh: no seed")
		return
	}
	path, ok, err := b.opts.Seeds.Get(b.opts.SeedKey)
	if err != nil {
		b.taking = b.canTake()
		b.say("etcd", "%v: discarded; booting from nothing and taking it again", err)
		return
	}
	if !ok {
		b.taking = b.canTake()
		if b.taking {
			b.say("etcd", "no seed for this build yet: booting from nothing, then taking one")
		} else {
			b.say("etcd", "no seed for this build yet: booting from nothing (a cluster of one apiserver takes it)")
		}
		return
	}
	if err := b.p.(Seeder).RestoreSeed(ctx, path); err != nil {
		if ctx.Err() != nil {
			// Interrupted, not refused: the seed is not at fault and
			// stays for the next boot (this one ends here).
			b.say("etcd", "restoring seed %s: %v", b.opts.SeedKey, err)
			return
		}
		b.opts.Seeds.Discard(b.opts.SeedKey)
		b.taking = b.canTake()
		b.say("etcd", "seed %s would not restore (%v): discarded; booting from nothing and taking it again", b.opts.SeedKey, err)
		return
	}
	b.seeded = true
	b.say("etcd", "restored seed %s into %d member(s)", b.opts.SeedKey, len(b.plan.Etcd))
}

// canTake says whether this boot, when it finds no seed, takes one: a
// seed is a single apiserver's bootstrap, pruned with Options.Binary.
func (b *boot) canTake() bool { return b.opts.Binary != "" && len(b.plan.APIServers) == 1 }

// takeSeed stores a snapshot of etcd just after the apiservers'
// bootstrap, before anything else writes, without the keys of seedPrune:
// the seed of later boots. A failure costs only the speed of later boots:
// it is reported, not fatal.
func (b *boot) takeSeed(ctx context.Context) {
	// The bootstrap controller creates the kubernetes Service just after
	// /readyz passes: every seed holds it.
	if err := b.poll(ctx, "the kubernetes Service", b.kubernetesService); err != nil {
		b.say("etcd", "could not take the seed: %v", err)
		return
	}
	var buf bytes.Buffer
	if err := b.snapshot(ctx, &buf); err != nil {
		b.say("etcd", "could not take the seed: %v", err)
		return
	}
	size, err := b.storeSeed(ctx, buf.Bytes())
	if err != nil {
		b.say("etcd", "could not store the seed: %v", err)
		return
	}
	b.took = true
	b.say("etcd", "took seed %s (%d kB)", b.opts.SeedKey, size/1024)
}

// storeSeed prunes a snapshot taken of a running member (seedPrune) and
// stores it as the seed; it returns the stored size.
func (b *boot) storeSeed(ctx context.Context, taken []byte) (int64, error) {
	dir, err := os.MkdirTemp("", "kubelab-seed-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	raw, pruned := filepath.Join(dir, "taken.db"), filepath.Join(dir, "seed.db")
	if err := os.WriteFile(raw, taken, 0o600); err != nil {
		return 0, err
	}
	if err := etcdutl.Prune(ctx, b.opts.Binary, raw, pruned, seedPrune...); err != nil {
		return 0, err
	}
	f, err := os.Open(pruned)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), b.opts.Seeds.Put(b.opts.SeedKey, f)
}

// snapshot writes a snapshot of the first etcd member to w.
func (b *boot) snapshot(ctx context.Context, w *bytes.Buffer) error {
	acc := b.p.Access()
	ep := acc.EtcdEndpoints[b.plan.Etcd[0]]
	cfg := clientv3.Config{Endpoints: []string{ep}, TLS: acc.EtcdTLS, DialTimeout: 2 * time.Second, Context: ctx, Logger: zap.NewNop()}
	if acc.EtcdDial != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(acc.EtcdDial)}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rc, err := cli.Snapshot(sctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = w.ReadFrom(rc)
	return err
}

// clients makes the admin clients once the apiservers' balancer (or the
// one apiserver) has an address.
func (b *boot) clients() error {
	cfg, err := cluster.LoadRESTConfig(b.p.Access().Kubeconfig)
	if err != nil {
		return err
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return fmt.Errorf("admin TLS: %w", err)
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	b.admin = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	b.server = cfg.Host
	cfg.QPS, cfg.Burst = -1, 0 // kubelab's own client: no client-side rate limit
	// This client registers every node and watches them all until they
	// are usable.
	cluster.SpeakProtobuf(cfg)
	b.cs, err = kubernetes.NewForConfig(cfg)
	return err
}

// waitEtcd waits until every member reports a Raft leader.
func (b *boot) waitEtcd(ctx context.Context) error {
	b.say("etcd", "waiting for Raft quorum and a leader")
	acc := b.p.Access()
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range b.plan.Etcd {
		g.Go(func() error {
			err := b.poll(gctx, m, func(ctx context.Context) error {
				return probe.EtcdLeader(ctx, acc.EtcdEndpoints[m], acc.EtcdTLS, acc.EtcdDial)
			})
			if err == nil {
				b.say(m, "ready")
			}
			return err
		})
	}
	return g.Wait()
}

// waitAll waits until every apiserver answers path with 200.
func (b *boot) waitAll(ctx context.Context, path string, names []string) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range names {
		g.Go(func() error { return b.waitHTTP(gctx, n, b.p.Access().APIServers[n]+path) })
	}
	return g.Wait()
}

// waitAny waits until one of the apiservers answers path with 200.
func (b *boot) waitAny(ctx context.Context, path string, names []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(names))
	for _, n := range names {
		go func() { errs <- b.waitHTTP(ctx, n, b.p.Access().APIServers[n]+path) }()
	}
	var all []error
	for range names {
		err := <-errs
		if err == nil {
			return nil
		}
		all = append(all, err)
	}
	return errors.Join(all...)
}

// waitHTTP waits until url answers 200, failing fast if a component
// exits.
func (b *boot) waitHTTP(ctx context.Context, name, url string) error {
	err := b.poll(ctx, name, func(ctx context.Context) error { return probe.HTTPOK(ctx, b.admin, url) })
	if err == nil {
		b.say(name, "ready")
	}
	return err
}

// reportHealthz says EventHealthz once the apiservers' /healthz passes
// (through the balancer where there is one), or nothing if ctx ends
// first: it only reports, the boot does not wait for it. It polls every
// 20 ms, as the controller-manager's gate does, so that the phase is
// timed as closely as what it gates.
func (b *boot) reportHealthz(ctx context.Context) {
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return probe.HTTPOK(cctx, b.admin, b.server+"/healthz") == nil, nil
	})
	if err == nil {
		b.say("kube-apiserver", EventHealthz)
	}
}

// kubernetesService is nil once the Service default/kubernetes exists.
func (b *boot) kubernetesService(ctx context.Context) error {
	_, err := b.cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	return err
}

// poll runs check until it passes: fast at first, backing off to 200ms,
// for at most the stage timeout. It fails at once when a started
// component has exited, and on timeout reports the last check's error.
func (b *boot) poll(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	delay := 25 * time.Millisecond
	var last error
	for {
		if err := b.failed(ctx); err != nil {
			return err
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)", what, ctx.Err(), last)
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// failed is the placement's Failed, but for a scheduler or
// controller-manager that exited for losing its leader Lease: that one is
// started again, at most maxBootRestarts times, as a kubelet restarts a
// static pod. With a short renew deadline (a lab's timings) an apiserver
// that stalls for longer on a loaded machine makes it give up while the
// cluster boots, which is no failure of the boot. After the boot nothing
// restarts a component: labs look at what happens when one is gone.
func (b *boot) failed(ctx context.Context) error {
	b.restartMu.Lock()
	defer b.restartMu.Unlock()
	err := b.p.Failed(ctx)
	var ex *Exited
	if !errors.As(err, &ex) || !leaseLost.MatchString(ex.Err.Error()) ||
		!slices.Contains(b.plan.ControllerManagers, ex.Component) && !slices.Contains(b.plan.Schedulers, ex.Component) {
		return err
	}
	if b.restarts[ex.Component] >= maxBootRestarts {
		return fmt.Errorf("%w (it lost its leader Lease %d times while the cluster booted)", err, b.restarts[ex.Component]+1)
	}
	if b.restarts == nil {
		b.restarts = map[string]int{}
	}
	b.restarts[ex.Component]++
	b.say(ex.Component, "lost its leader Lease while the cluster booted (an apiserver did not answer a renewal within the renew deadline) and exited: starting it again, as a kubelet restarts a static pod")
	start := func() error { return b.p.Start(ctx, ex.Component) }
	if a, ok := b.p.(actor); ok { // a container exists already: start it again
		start = func() error { return a.Act(ctx, ex.Component, cluster.Start) }
	}
	if err := start(); err != nil {
		return fmt.Errorf("start %s again: %w", ex.Component, err)
	}
	return nil
}

// watchFailures polls the placement until ctx ends, and returns the
// first failure it reports (nil if none).
func (b *boot) watchFailures(ctx context.Context) error {
	var found error
	_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, false, func(ctx context.Context) (bool, error) {
		if err := b.failed(ctx); err != nil {
			found = err
			return true, nil
		}
		return false, nil
	})
	return found
}

// nodesSettle is how long every node must stay usable before the boot
// counts them so, where nodes report NotReady first
// (Plan.NodesReportNotReady): the node lifecycle controller may taint a
// node that just turned Ready once more, from the older state its cache
// still held (seen on docker: 2/3 usable, then 1/3 30 ms later, for half a
// second).
const nodesSettle = 500 * time.Millisecond

// waitNodes waits until each of the topology's nodes is usable (see
// waitNodesOnce) and, where nodes report NotReady first, still is
// nodesSettle later.
func (b *boot) waitNodes(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	for {
		if err := b.waitNodesOnce(ctx); err != nil {
			return err
		}
		if !b.plan.NodesReportNotReady {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes Ready: %w", ctx.Err())
		case <-time.After(nodesSettle):
		}
		nl, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		usable := 0
		for i := range nl.Items {
			if n := &nl.Items[i]; cluster.NodeUsable(n) && n.Spec.PodCIDR != "" {
				usable++
			}
		}
		if usable >= len(b.p.Topology().Nodes) {
			return nil
		}
	}
}

// waitNodesOnce watches every node (one watch, not a poll per node) until
// each of the topology's nodes is Ready, untainted by the node lifecycle
// controller and has a pod range, reporting progress as the count grows.
func (b *boot) waitNodesOnce(ctx context.Context) error {
	want := b.p.Topology().Nodes
	wanted := map[string]bool{}
	for _, n := range want {
		wanted[n.Name] = true
	}
	var mu sync.Mutex
	ready := map[string]bool{}
	shown := -1
	lw := cache.NewListWatchFromClient(b.cs.CoreV1().RESTClient(), "nodes", "", fields.Everything())
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(ev watch.Event) (bool, error) {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || !wanted[n.Name] {
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		ready[n.Name] = cluster.NodeUsable(n) && n.Spec.PodCIDR != ""
		count := 0
		for _, r := range ready {
			if r {
				count++
			}
		}
		if step := max(1, len(want)/10); count == len(want) || count/step != shown/step {
			shown = count
			b.say("nodes", EventNodesReady, count, len(want))
		}
		return count == len(want), nil
	})
	if err != nil {
		return fmt.Errorf("nodes Ready %d/%d (Ready, untainted by the node lifecycle controller, with a pod range): %w", max(shown, 0), len(want), err)
	}
	return nil
}
