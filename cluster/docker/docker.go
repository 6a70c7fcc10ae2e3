// Package docker is kubelab's container backend: every component runs in
// its own container through testcontainers-go, on one Docker network per
// cluster. Workers are real nodes: containerd, the kubelet and kube-proxy
// (iptables mode) with a CNI bridge and routes between nodes; two or
// more apiservers sit behind HAProxy, one is reached directly.
// Containers, networks and volumes carry
// labels naming their cluster, so everything is found (and removed) from
// the world, with no hidden state file.
//
// Images are built locally (no registry is reachable): see BuildImages.
package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/lifecycle"
	"kubelab.dev/kubelab/cluster/seed"
	"kubelab.dev/kubelab/internal/binaries"
)

// Labels on every container, network and volume of a cluster.
const (
	labelManaged   = "dev.kubelab.managed"
	labelCluster   = "dev.kubelab.cluster"
	labelComponent = "dev.kubelab.component"
	labelRole      = "dev.kubelab.role"
	labelOwner     = "dev.kubelab.owner"     // "<pid>:<start time>" of the process that made the cluster
	labelEphemeral = "dev.kubelab.ephemeral" // "true": the cluster dies with its owner
	labelDir       = "dev.kubelab.dir"       // the cluster's state directory on the host
	labelHome      = "dev.kubelab.home"      // HomeID of the kubelab home the cluster belongs to
	readyMarker    = "ready"                 // file in the state directory once a persistent up finished
)

func init() {
	// The reaper image cannot be pulled here; kubelab removes its own
	// containers by label (Down, Sweep). And testcontainers must dial the
	// daemon's published ports on localhost (it otherwise guesses a
	// gateway address because /.dockerenv exists on some hosts).
	setDefaultEnv("TESTCONTAINERS_RYUK_DISABLED", "true")
	setDefaultEnv("TESTCONTAINERS_HOST_OVERRIDE", "localhost")
	// kubelab reports progress itself.
	tclog.SetDefault(quiet{})
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func setDefaultEnv(k, v string) {
	if os.Getenv(k) == "" {
		os.Setenv(k, v)
	}
}

// MaxNodes is the most worker containers a docker cluster may have.
const MaxNodes = 20

// Options configure a docker cluster.
type Options struct {
	// Home is the kubelab home the cluster belongs to: clusters of other
	// homes on the same Docker engine are never seen or touched.
	Home string
	// Dir is the cluster's state directory on the host (PKI, kubeconfig).
	Dir string
	// Binary is the kubelab binary. The images hold the components
	// binary next to it (see package binaries), which also restores and
	// seeds etcd; the reaper is kubelab itself.
	Binary string
	// Ephemeral clusters are removed by the next Sweep once their owner
	// process is gone.
	Ephemeral bool
	// OwnerStart is the owner's start time (for the owner label).
	OwnerStart string
	// Seeds is the seed cache (see cluster/seed): $KUBELAB_SEEDS when
	// empty, else the home's seeds directory.
	Seeds string
	Log   *slog.Logger
}

// components is the executable that carries the components: the images
// hold it, and it runs etcdutl on the host.
func (b *Backend) components() string { return binaries.ComponentsOf(b.opts.Binary) }

// etcdutl is the executable that runs etcdutl and prune-snapshot on the
// host: etcd's own (binaries.Program), which starts in a third of the
// components' time, on the boot's path before any container starts.
func (b *Backend) etcdutl() string {
	if p, ok := binaries.Program(b.opts.Binary, "etcdutl"); ok {
		return p
	}
	return b.components()
}

// Backend is a cluster of containers.
type Backend struct {
	opts Options
	topo cluster.Topology
	cli  *client.Client
	// capacity holds each node's kubelet sizing flags (see capacityFlags).
	capacity map[string][]string

	mu      sync.Mutex
	netID   string
	netName string
	ctrs    map[string]*ctr // by component name
	access  cluster.Access
	ips     map[string]string // component -> address on the lab network
	images  Images
	pk      *pkiDir
	// apiPort is the host port (on 127.0.0.1) a single apiserver
	// publishes 6443 at; 0 where a load balancer stands in front of
	// several. Fixed, so that it stays the same when the container starts
	// again.
	apiPort int
	// seeded is set when the etcd members start from a seed: the
	// controllers' gate then skips the bootstrap hooks (ServingReadyz).
	seeded bool

	// When Failed last found every container running, shared by every
	// wait of the boot.
	failMu sync.Mutex
	failAt time.Time
}

type ctr struct {
	name, role, id string
	ports          map[string]string // container port -> 127.0.0.1:hostport
	stopped        bool
}

// engine is a client of the Docker engine at $DOCKER_HOST or the default
// socket, for what only lists and removes (the sweeps every kubelab
// command runs first): it costs one request per call. Making
// testcontainers' client also asks the engine for its info and for its
// host, ~50 ms that every command paid wherever Docker runs.
func engine() (*client.Client, error) { return client.New(client.FromEnv) }

// Available reports whether a Docker engine answers ($DOCKER_HOST or the
// default socket) before ctx ends. It pings with the engine's own client:
// testcontainers' client asks the engine for its info while it is made,
// and panics when that times out.
func Available(ctx context.Context) error {
	c, err := engine()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Ping(ctx, client.PingOptions{})
	return err
}

// New prepares a docker cluster; Up creates it.
func New(t cluster.Topology, opts Options) (*Backend, error) {
	t = t.WithDefaults()
	errs := t.Validate()
	if len(t.Nodes) > MaxNodes {
		errs = append(errs, fmt.Errorf("nodes: the docker backend runs at most %d (each is a container with containerd, a kubelet and kube-proxy), got %d", MaxNodes, len(t.Nodes)))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Home == "" {
		opts.Home = filepath.Dir(opts.Dir)
	}
	if opts.Seeds == "" {
		opts.Seeds = seed.DirOf(opts.Home)
	}
	dc, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	return &Backend{opts: opts, topo: t, cli: dc.Client, ctrs: map[string]*ctr{}}, nil
}

// Name implements cluster.Backend.
func (b *Backend) Name() string { return "docker" }

// Topology implements cluster.Backend.
func (b *Backend) Topology() cluster.Topology { return b.topo }

// Access implements cluster.Backend.
func (b *Backend) Access() cluster.Access {
	b.mu.Lock()
	defer b.mu.Unlock()
	acc := b.access
	acc.EtcdEndpoints, acc.APIServers = map[string]string{}, map[string]string{}
	for k, v := range b.access.EtcdEndpoints {
		acc.EtcdEndpoints[k] = v
	}
	acc.Serving = map[string]string{}
	for k, v := range b.access.Serving {
		acc.Serving[k] = v
	}
	acc.AuditLogs = map[string]string{}
	for k, v := range b.access.APIServers {
		acc.APIServers[k] = v
		if b.topo.Audited() {
			acc.AuditLogs[k] = filepath.Join(b.logDir(k), "audit.log")
		}
	}
	acc.SchedulingLogs = map[string]string{}
	for _, s := range controlplane.Schedulers(b.topo) {
		if !b.topo.Scheduler.Recorded() {
			break
		}
		acc.SchedulingLogs[s] = filepath.Join(b.logDir(s), "scheduling.jsonl")
	}
	return acc
}

// logDir is the host directory a control-plane container writes its
// records into (bind-mounted at /var/log/kubelab): an apiserver's audit
// log, a scheduler's decisions.
func (b *Backend) logDir(component string) string {
	return filepath.Join(b.opts.Dir, "records", component)
}

func (b *Backend) labels(component, role string) map[string]string {
	return map[string]string{labelManaged: "true", labelCluster: b.topo.Name, labelComponent: component, labelRole: role,
		labelOwner: fmt.Sprintf("%d:%s", os.Getpid(), b.opts.OwnerStart), labelEphemeral: strconv.FormatBool(b.opts.Ephemeral),
		labelDir: b.opts.Dir, labelHome: HomeID(b.opts.Home)}
}

// objectName names a container or volume of this cluster, unique on the
// engine across homes.
func (b *Backend) objectName(component string) string {
	return b.topo.Name + "-" + component + "-" + HomeID(b.opts.Home)[:6]
}

// Up implements cluster.Backend through the one boot lifecycle (see
// cluster/lifecycle). On failure, or when ctx is cancelled, everything
// started so far is removed before Up returns.
func (b *Backend) Up(ctx context.Context, progress func(cluster.Event)) error {
	opts := lifecycle.Options{Timeout: 3 * time.Minute, Seeds: seed.Cache{Dir: b.opts.Seeds},
		Fresh: b.topo.Fresh || seed.FreshFromEnv(), Binary: b.etcdutl()}
	key, err := seed.Key(b.components(), "backend=docker")
	if err != nil {
		b.opts.Log.Warn("no seed", "err", err)
		opts.Seeds = seed.Cache{}
	}
	opts.SeedKey = key
	return lifecycle.Up(ctx, b, progress, opts)
}
