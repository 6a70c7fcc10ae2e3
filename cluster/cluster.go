// Package cluster is kubelab's facade over a running lab cluster: bring it
// up from a Topology, inspect it (components, the etcd Raft table, lease
// holders) and hurt it (kill, stop, start, restart, pause, resume any
// component; take nodes down) and back its etcd up and restore it
// (SaveSnapshot, RestoreSnapshot).
//
// Backends (cluster/embedded, later cluster/docker) implement the small
// Backend interface; everything that only needs the cluster's APIs (etcd
// status, leases, resolving "the current leader") lives here once, so every
// backend behaves the same. The package knows nothing about labs.
package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Role is the kind of a component.
type Role string

// Component roles.
const (
	RoleEtcd              Role = "etcd"
	RoleAPIServer         Role = "kube-apiserver"
	RoleScheduler         Role = "kube-scheduler"
	RoleControllerManager Role = "kube-controller-manager"
	RoleLoadBalancer      Role = "load-balancer"
	RoleNode              Role = "node"
)

// State is what a component is doing now.
type State string

// Component states.
const (
	StateRunning State = "running"
	StatePaused  State = "paused"
	StateStopped State = "stopped" // stopped on purpose (kill, stop, node down)
	StateExited  State = "exited"  // died on its own
)

// Action is a fault or repair applied to one component.
type Action string

// Actions.
const (
	Kill    Action = "kill"    // SIGKILL
	Stop    Action = "stop"    // SIGTERM, wait for exit
	Start   Action = "start"   // start a stopped component
	Restart Action = "restart" // stop, then start
	Pause   Action = "pause"   // SIGSTOP
	Resume  Action = "resume"  // SIGCONT
	// Partition cuts a component off the cluster network; Heal reconnects
	// it. Only backends with a network between components support them
	// (docker); others return ErrUnsupported.
	Partition Action = "partition"
	Heal      Action = "heal"
)

// Actions lists every Action.
var Actions = []Action{Kill, Stop, Start, Restart, Pause, Resume, Partition, Heal}

// ErrUnsupported is returned for an action a backend cannot perform.
var ErrUnsupported = errors.New("not supported by this backend")

// ErrExists is returned by Up for a cluster whose name is taken; Up
// leaves the existing cluster as it is.
var ErrExists = errors.New("already exists")

// Targets that resolve to a component at the moment of the call.
const (
	TargetEtcdLeader       = "etcd-leader"
	TargetEtcdFollower     = "etcd-follower"
	TargetSchedulerLeader  = "scheduler-leader"
	TargetControllerLeader = "controller-manager-leader"
)

// Component is one process or container of the cluster.
type Component struct {
	// Name is unique in the cluster: etcd-1, kube-apiserver-2, worker-3...
	Name string `json:"name"`
	// Role of the component.
	Role Role `json:"role"`
	// State now.
	State State `json:"state"`
	// PID of the process (embedded backend), 0 when not running.
	PID int `json:"pid,omitempty"`
	// ID of the container (docker backend).
	ID string `json:"id,omitempty"`
	// Endpoint the component serves on, if any.
	Endpoint string `json:"endpoint,omitempty"`
	// Exit says how a component in state exited ended, where the backend
	// knows: "exit status 1", "signal: killed", "OOMKilled".
	Exit string `json:"exit,omitempty"`
	// Log is where its output goes.
	Log string `json:"log,omitempty"`
}

// Access is how clients reach a cluster.
type Access struct {
	// Kubeconfig is the admin kubeconfig path (mode 0600).
	Kubeconfig string
	// EtcdEndpoints maps each etcd member name to its client URL.
	EtcdEndpoints map[string]string
	// EtcdTLS authenticates to etcd; nil for plain HTTP.
	EtcdTLS *tls.Config
	// EtcdDial, when set, connects to an etcd endpoint's host:port (for
	// members reached by name on a network the host does not resolve).
	EtcdDial func(ctx context.Context, addr string) (net.Conn, error)
	// APIServers maps each apiserver name to its URL (not through the LB).
	APIServers map[string]string
	// AuditLogs maps each apiserver name to its audit log on this host
	// (JSON lines of audit.k8s.io/v1 Events); empty where there is none.
	AuditLogs map[string]string
	// Serving maps each etcd member, kube-scheduler and
	// kube-controller-manager name to the URL of its HTTP endpoints
	// (/metrics, and /health or /healthz). A member's takes etcd's client
	// certificate (EtcdTLS); the others verify and authenticate the
	// admin's, as the apiservers do.
	Serving map[string]string
	// SchedulingLogs maps each kube-scheduler name to the log of its
	// decisions on this host (JSON lines of observe.Decision); empty where
	// there is none.
	SchedulingLogs map[string]string
}

// Event is boot or teardown progress, for people watching.
type Event struct {
	Component string
	Message   string
	Elapsed   time.Duration
}

// Backend runs the components of one cluster. Implementations must make
// Down idempotent and remove everything Up created, even after a failed Up.
type Backend interface {
	// Name of the backend: "embedded", "docker", "kubeconfig".
	Name() string
	// Up brings the cluster up and returns when every component is healthy
	// and every node is Ready.
	Up(ctx context.Context, progress func(Event)) error
	// Down removes every process, container, port and file of the cluster.
	Down(ctx context.Context) error
	// Components lists components with their current state.
	Components(ctx context.Context) ([]Component, error)
	// Act applies an action to one component by name (nodes included).
	Act(ctx context.Context, name string, a Action) error
	// Access returns the cluster's endpoints and credentials.
	Access() Access
	// Topology is the defaulted topology the cluster was made from.
	Topology() Topology
}

// Cluster is a lab cluster: a backend plus the inspections and faults that
// work the same on every backend.
type Cluster struct {
	Backend
	log *slog.Logger

	mu     sync.Mutex
	rest   *rest.Config
	client kubernetes.Interface
	etcd   map[string]*clientv3.Client
	dyn    *dynamicOnce
}

// New wraps a backend.
func New(b Backend, log *slog.Logger) *Cluster {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cluster{Backend: b, log: log}
}

// RESTConfig returns an admin client config for the cluster.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	if c.rest == nil {
		cfg, err := LoadRESTConfig(c.Access().Kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = 200, 400
		cfg.Timeout = 15 * time.Second
		c.rest = cfg
	}
	return rest.CopyConfig(c.rest), nil
}

// Client returns an admin clientset.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	if c.client == nil {
		cfg, err := c.RESTConfig()
		if err != nil {
			return nil, err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		c.client = cs
	}
	return c.client, nil
}

// EtcdMember is one row of the Raft table.
type EtcdMember struct {
	Name         string `json:"name"`
	ID           string `json:"id"`
	Endpoint     string `json:"endpoint"`
	Reachable    bool   `json:"reachable"`
	IsLeader     bool   `json:"isLeader"`
	Leader       string `json:"leader,omitempty"` // name of the leader this member follows
	Term         uint64 `json:"term"`
	RaftIndex    uint64 `json:"raftIndex"`
	AppliedIndex uint64 `json:"appliedIndex"`
	DBSize       int64  `json:"dbSize"`
	Error        string `json:"error,omitempty"`
}

// EtcdStatus asks every member for its Raft status. Unreachable members are
// listed with Reachable false and the error; only a failure to build the
// client is returned as an error.
func (c *Cluster) EtcdStatus(ctx context.Context) ([]EtcdMember, error) {
	acc := c.Access()
	names := make([]string, 0, len(acc.EtcdEndpoints))
	for n := range acc.EtcdEndpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	type res struct {
		i int
		m EtcdMember
	}
	out := make([]EtcdMember, len(names))
	ch := make(chan res, len(names))
	for i, n := range names {
		go func() {
			ch <- res{i, c.memberStatus(ctx, n, acc.EtcdEndpoints[n], acc)}
		}()
	}
	for range names {
		r := <-ch
		out[r.i] = r.m
	}
	ids := map[string]string{}
	for _, m := range out {
		if m.ID != "" {
			ids[m.ID] = m.Name
		}
	}
	for i := range out {
		if out[i].Leader != "" {
			if n, ok := ids[out[i].Leader]; ok {
				out[i].Leader = n
			}
		}
	}
	return out, nil
}

func (c *Cluster) memberStatus(ctx context.Context, name, ep string, acc Access) EtcdMember {
	m := EtcdMember{Name: name, Endpoint: ep}
	cli, err := c.etcdClient(ep, acc)
	if err != nil {
		m.Error = err.Error()
		return m
	}
	// The client retries an unavailable member until the deadline. A member
	// whose connection is failing is reported at once, and one that is
	// (re)connecting gets a short deadline: on loopback a live member
	// answers in milliseconds, and a slow answer would delay every wait on
	// the Raft table.
	timeout := 1500 * time.Millisecond
	switch state := cli.ActiveConnection().GetState(); state {
	case connectivity.TransientFailure:
		m.Error = "connection failing (" + state.String() + ")"
		return m
	case connectivity.Ready:
	default:
		timeout = 250 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Over the member's kept connection: clientv3's Maintenance.Status
	// dials the endpoint anew for every call, and at the timeline's ten
	// polls a second the TLS handshakes alone took a third of each etcd
	// member's CPU and a quarter of kubelab's own.
	st, err := pb.NewMaintenanceClient(cli.ActiveConnection()).Status(ctx, &pb.StatusRequest{})
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.Reachable = true
	m.ID = fmt.Sprintf("%x", st.Header.MemberId)
	m.Term = st.RaftTerm
	m.RaftIndex = st.RaftIndex
	m.AppliedIndex = st.RaftAppliedIndex
	m.DBSize = st.DbSize
	m.IsLeader = st.Leader == st.Header.MemberId && st.Leader != 0
	if st.Leader != 0 {
		m.Leader = fmt.Sprintf("%x", st.Leader)
	}
	if len(st.Errors) > 0 {
		m.Error = strings.Join(st.Errors, "; ")
	}
	return m
}

// etcdClient returns a client for one member, kept for the life of the
// Cluster: status is polled often and a TLS handshake per poll is costly.
// A client of a dead member fails fast and reconnects when it is back.
func (c *Cluster) etcdClient(ep string, acc Access) (*clientv3.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cli, ok := c.etcd[ep]; ok {
		return cli, nil
	}
	cfg := clientv3.Config{Endpoints: []string{ep}, TLS: acc.EtcdTLS, Logger: zap.NewNop(),
		// A member that was killed is reconnected within half a second of
		// its start (gRPC's default backoff grows to two minutes), and a
		// connection attempt that hangs (a partitioned member) is given
		// up after two.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: 2 * time.Second,
		})}}
	if acc.EtcdDial != nil {
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(acc.EtcdDial))
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", ep, err)
	}
	if c.etcd == nil {
		c.etcd = map[string]*clientv3.Client{}
	}
	c.etcd[ep] = cli
	return cli, nil
}

// Close releases the clients the Cluster keeps (not the cluster itself).
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ep, cli := range c.etcd {
		_ = cli.Close()
		delete(c.etcd, ep)
	}
}

// ErrNoLeader is returned when a leader is asked for and there is none.
var ErrNoLeader = errors.New("no leader")

// EtcdLeader returns the name of the current etcd leader.
func (c *Cluster) EtcdLeader(ctx context.Context) (string, error) {
	ms, err := c.EtcdStatus(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.IsLeader {
			return m.Name, nil
		}
	}
	return "", fmt.Errorf("etcd: %w", ErrNoLeader)
}

// LeaseHolder is who holds a leader-election Lease.
type LeaseHolder struct {
	Lease       string    `json:"lease"`     // namespace/name
	Holder      string    `json:"holder"`    // holderIdentity as written
	Component   string    `json:"component"` // component name, derived from the identity
	Transitions int32     `json:"transitions"`
	RenewTime   time.Time `json:"renewTime"`
	Duration    int32     `json:"leaseDurationSeconds"`
}

// Leader-election leases of the control plane.
const (
	LeaseScheduler         = "kube-system/kube-scheduler"
	LeaseControllerManager = "kube-system/kube-controller-manager"
)

// Lease reads one lease in "namespace/name" form. A missing lease is not an
// error: the holder is empty.
func (c *Cluster) Lease(ctx context.Context, key string) (LeaseHolder, error) {
	h := LeaseHolder{Lease: key}
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return h, fmt.Errorf("lease %q: want namespace/name", key)
	}
	cs, err := c.Client()
	if err != nil {
		return h, err
	}
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if isNotFound(err) {
			return h, nil
		}
		return h, fmt.Errorf("get lease %s: %w", key, err)
	}
	if l.Spec.HolderIdentity != nil {
		h.Holder = *l.Spec.HolderIdentity
		// Control-plane components run with their component name as
		// hostname, and client-go's identity is "<hostname>_<uuid>".
		h.Component, _, _ = strings.Cut(h.Holder, "_")
	}
	if l.Spec.LeaseTransitions != nil {
		h.Transitions = *l.Spec.LeaseTransitions
	}
	if l.Spec.RenewTime != nil {
		h.RenewTime = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		h.Duration = *l.Spec.LeaseDurationSeconds
	}
	return h, nil
}

// Resolve turns a target into a component name at the moment of the call:
// "etcd-leader", "etcd-follower", "scheduler-leader",
// "controller-manager-leader", or a component name as is. A daemon inside
// a node, NODE/DAEMON (worker-2/kubelet), resolves to itself when NODE is
// a node of the cluster and DAEMON one of NodeDaemons. A leader target
// waits for an election in progress (awaitLeader).
func (c *Cluster) Resolve(ctx context.Context, target string) (string, error) {
	switch target {
	case TargetEtcdLeader, TargetSchedulerLeader, TargetControllerLeader:
		return c.awaitLeader(ctx, target)
	}
	return c.resolve(ctx, target)
}

// leaderWait bounds how long Resolve waits for an election in progress.
const leaderWait = 10 * time.Second

// awaitLeader resolves a leader target, waiting while there is none: an
// election in progress (etcd's took 0.3 s under a loaded machine, where a
// feature then failed to kill "the" leader) ends with one, the current
// leader a fault means to hit. After leaderWait, or when ctx ends, the
// last ErrNoLeader is the answer.
func (c *Cluster) awaitLeader(ctx context.Context, target string) (string, error) {
	limit := time.Now().Add(leaderWait)
	for {
		name, err := c.resolve(ctx, target)
		if !errors.Is(err, ErrNoLeader) || time.Now().After(limit) {
			return name, err
		}
		select {
		case <-ctx.Done():
			return name, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) resolve(ctx context.Context, target string) (string, error) {
	if node, daemon, ok := SplitNodeDaemon(target); ok {
		return target, c.checkNodeDaemon(ctx, node, daemon)
	}
	switch target {
	case TargetEtcdLeader:
		return c.EtcdLeader(ctx)
	case TargetEtcdFollower:
		ms, err := c.EtcdStatus(ctx)
		if err != nil {
			return "", err
		}
		for _, m := range ms {
			if m.Reachable && !m.IsLeader {
				return m.Name, nil
			}
		}
		return "", fmt.Errorf("etcd: no reachable follower")
	case TargetSchedulerLeader, TargetControllerLeader:
		key := LeaseScheduler
		if target == TargetControllerLeader {
			key = LeaseControllerManager
		}
		h, err := c.Lease(ctx, key)
		if err != nil {
			return "", err
		}
		if h.Component == "" {
			return "", fmt.Errorf("lease %s: %w", key, ErrNoLeader)
		}
		return h.Component, nil
	}
	comps, err := c.Components(ctx)
	if err != nil {
		return "", err
	}
	for _, comp := range comps {
		if comp.Name == target {
			return target, nil
		}
	}
	return "", fmt.Errorf("no component %q (want a component name or one of %s, %s, %s, %s)",
		target, TargetEtcdLeader, TargetEtcdFollower, TargetSchedulerLeader, TargetControllerLeader)
}

// checkNodeDaemon says why node/daemon names no daemon of this cluster.
func (c *Cluster) checkNodeDaemon(ctx context.Context, node, daemon string) error {
	if !KnownDaemon(daemon) {
		return fmt.Errorf("no daemon %q inside a node (want %s)", daemon, strings.Join(NodeDaemons, ", "))
	}
	comps, err := c.Components(ctx)
	if err != nil {
		return err
	}
	var nodes []string
	for _, comp := range comps {
		if comp.Role != RoleNode {
			continue
		}
		if comp.Name == node {
			return nil
		}
		nodes = append(nodes, comp.Name)
	}
	return fmt.Errorf("no node %q for %s/%s (the nodes are %s)", node, node, daemon, strings.Join(nodes, ", "))
}

// NodeHits says whether target is a control-plane node of a stacked
// topology and, if so, which of its components a changes: all of them,
// but for a start or resume only those not running (none when the node
// runs whole). A partition or heal is never a node's: its components run
// apart.
func (c *Cluster) NodeHits(ctx context.Context, target string, a Action) (hits []string, node bool, err error) {
	members, ok := c.Topology().ControlPlaneNodes()[target]
	if !ok || a == Partition || a == Heal {
		return nil, false, nil
	}
	if a != Start && a != Resume {
		return members, true, nil
	}
	comps, err := c.Components(ctx)
	if err != nil {
		return nil, true, err
	}
	for _, m := range members {
		if !slices.ContainsFunc(comps, func(comp Component) bool { return comp.Name == m && comp.State == StateRunning }) {
			hits = append(hits, m)
		}
	}
	return hits, true, nil
}

// Do resolves target and applies a to it, returning the component hit.
// A control-plane node of a stacked topology is its components, hit at
// once (NodeHits; their names are returned joined by ", ").
func (c *Cluster) Do(ctx context.Context, target string, a Action) (string, error) {
	if hits, node, err := c.NodeHits(ctx, target, a); node {
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", a, target, err)
		}
		c.log.Info("fault", "action", a, "target", target, "components", hits)
		return strings.Join(hits, ", "), c.ActAll(ctx, hits, a)
	}
	name, err := c.Resolve(ctx, target)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", a, target, err)
	}
	c.log.Info("fault", "action", a, "target", target, "component", name)
	if err := c.Act(ctx, name, a); err != nil {
		return name, fmt.Errorf("%s %s: %w", a, name, err)
	}
	return name, nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// Etcdctler is a backend whose etcd members etcdctl can reach from this
// machine (a lab script's $ETCDCTL).
type Etcdctler interface {
	// EtcdctlEnv is the environment (ETCDCTL_ENDPOINTS, ETCDCTL_CACERT,
	// ETCDCTL_CERT, ETCDCTL_KEY...) that points etcdctl at the members.
	EtcdctlEnv() map[string]string
}

// NodeExecer is a backend whose nodes are real machines (containers) that
// commands can run in: their iptables, their container runtime.
type NodeExecer interface {
	// ExecNode runs cmd in node and returns its output.
	ExecNode(ctx context.Context, node string, cmd ...string) (string, error)
}

// ErrNoNodeInternals says a backend's nodes are simulated: they have no
// iptables and no container runtime to look at.
var ErrNoNodeInternals = errors.New("needs the docker backend: this backend's nodes are simulated (no iptables, no container runtime)")

// NodeExec runs cmd in a node of a backend with real nodes.
func (c *Cluster) NodeExec(ctx context.Context, node string, cmd ...string) (string, error) {
	ne, ok := c.Backend.(NodeExecer)
	if !ok {
		return "", fmt.Errorf("node %s on the %s backend: %w", node, c.Name(), ErrNoNodeInternals)
	}
	return ne.ExecNode(ctx, node, cmd...)
}
