package engine

// Fakes of the two narrow interfaces a lab run stands on, cluster.Backend
// and the observer, so the runner's own behaviour (step order, hooks,
// continueOnError, cascading timeouts, failure reports) is tested without
// booting a cluster. Everything else is the real runner.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

// transcript is the ordered log of what a run did, as the fakes and the
// runner's progress saw it.
type transcript struct {
	mu    sync.Mutex
	lines []string
}

func (t *transcript) addf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
}

func (t *transcript) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// faults are what a script tells the fakes to fail, with the error to
// fail with.
type faults struct {
	up    error
	watch error
	act   map[string]error // "kill etcd-2" -> error
}

// fakeKubeconfig is where the fake backend says its kubeconfig is: nowhere,
// so an operation that needs API clients fails saying so.
const fakeKubeconfig = "/nonexistent/kubelab-fake/kubeconfig"

// fakeBackend is a cluster.Backend whose components are rows of a table,
// one per component of the topology: Up, Down and Act are logged, Act
// changes a component's state, and each can be told to fail.
type fakeBackend struct {
	topo   cluster.Topology
	log    *transcript
	faults faults

	mu    sync.Mutex
	comps []cluster.Component
}

var _ cluster.Backend = (*fakeBackend)(nil)

func (b *fakeBackend) Name() string { return "fake" }

func (b *fakeBackend) Up(context.Context, func(cluster.Event)) error {
	b.log.addf("backend: up")
	if err := b.faults.up; err != nil {
		b.log.addf("backend: up failed: %v", err)
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.comps = topologyComponents(b.topo)
	return nil
}

func (b *fakeBackend) Down(context.Context) error {
	b.log.addf("backend: down")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.comps = nil
	return nil
}

func (b *fakeBackend) Components(context.Context) ([]cluster.Component, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.comps), nil
}

// Act changes the component's state as the action would: kill and stop
// stop it, start, restart and resume run it, pause pauses it.
func (b *fakeBackend) Act(_ context.Context, name string, a cluster.Action) error {
	b.log.addf("backend: act %s %s", a, name)
	if err := b.faults.act[string(a)+" "+name]; err != nil {
		b.log.addf("backend: act %s %s failed: %v", a, name, err)
		return err
	}
	state := map[cluster.Action]cluster.State{
		cluster.Kill: cluster.StateStopped, cluster.Stop: cluster.StateStopped,
		cluster.Start: cluster.StateRunning, cluster.Restart: cluster.StateRunning, cluster.Resume: cluster.StateRunning,
		cluster.Pause: cluster.StatePaused,
	}[a]
	if state == "" {
		return fmt.Errorf("%s %s: %w", a, name, cluster.ErrUnsupported)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.comps {
		if b.comps[i].Name == name {
			b.comps[i].State = state
			return nil
		}
	}
	return fmt.Errorf("%s %s: no such component", a, name)
}

func (b *fakeBackend) Access() cluster.Access { return cluster.Access{Kubeconfig: fakeKubeconfig} }

func (b *fakeBackend) Topology() cluster.Topology { return b.topo }

// topologyComponents are the components a backend runs for t (defaulted),
// all running: the names the lab loader lets targets use.
func topologyComponents(t cluster.Topology) []cluster.Component {
	var out []cluster.Component
	for _, g := range []struct {
		role cluster.Role
		n    int
	}{{cluster.RoleEtcd, t.Etcd}, {cluster.RoleAPIServer, t.APIServers}, {cluster.RoleScheduler, t.Schedulers}, {cluster.RoleControllerManager, t.ControllerManagers}} {
		for i := 1; i <= g.n; i++ {
			out = append(out, cluster.Component{Name: fmt.Sprintf("%s-%d", g.role, i), Role: g.role, State: cluster.StateRunning})
		}
	}
	if t.APIServers > 1 {
		out = append(out, cluster.Component{Name: "load-balancer", Role: cluster.RoleLoadBalancer, State: cluster.StateRunning})
	}
	for _, n := range t.Nodes {
		out = append(out, cluster.Component{Name: n.Name, Role: cluster.RoleNode, State: cluster.StateRunning})
	}
	return out
}

// viewState is the cluster's objects as a script sets them.
type viewState struct {
	Nodes       []assertions.Node       `yaml:"nodes"`
	Pods        []assertions.Pod        `yaml:"pods"`
	Deployments []assertions.Deployment `yaml:"deployments"`
}

// fakeView is an observer without informers: its objects are what the
// script set, and its components are the fake backend's, read at each
// evaluation as the real view reads them. Other lookups see an empty
// cluster.
type fakeView struct {
	state   viewState
	be      *fakeBackend
	log     *transcript
	changed chan struct{} // never signalled: nothing is watched
}

var _ observer = (*fakeView)(nil)

func newFakeView(s viewState, be *fakeBackend, log *transcript) *fakeView {
	for i := range s.Pods {
		if s.Pods[i].Namespace == "" {
			s.Pods[i].Namespace = assertions.DefaultNamespace
		}
	}
	// As the informers' listers are read: by name.
	slices.SortFunc(s.Pods, func(a, b assertions.Pod) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Nodes, func(a, b assertions.Node) int { return strings.Compare(a.Name, b.Name) })
	for i := range s.Nodes {
		s.Nodes[i].Exists = true
	}
	for i := range s.Deployments {
		s.Deployments[i].Exists = true
	}
	return &fakeView{state: s, be: be, log: log, changed: make(chan struct{})}
}

func (v *fakeView) Pods(_ context.Context, namespace, selector string) ([]assertions.Pod, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	out := []assertions.Pod{}
	for _, p := range v.state.Pods {
		if p.Namespace == namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (v *fakeView) Pod(_ context.Context, namespace, name string) (assertions.Pod, error) {
	for _, p := range v.state.Pods {
		if p.Namespace == namespace && p.Name == name {
			return p, nil
		}
	}
	return assertions.Pod{Name: name, Namespace: namespace}, nil
}

func (v *fakeView) Nodes(context.Context) ([]assertions.Node, error) {
	return slices.Clone(v.state.Nodes), nil
}

func (v *fakeView) Node(_ context.Context, name string) (assertions.Node, error) {
	for _, n := range v.state.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return assertions.Node{Name: name}, nil
}

func (v *fakeView) Deployment(_ context.Context, _, name string) (assertions.Deployment, error) {
	for _, d := range v.state.Deployments {
		if d.Name == name {
			return d, nil
		}
	}
	return assertions.Deployment{Name: name}, nil
}

func (v *fakeView) Components(ctx context.Context) ([]assertions.Component, error) {
	cs, err := v.be.Components(ctx)
	out := make([]assertions.Component, 0, len(cs))
	for _, c := range cs {
		out = append(out, assertions.Component{Name: c.Name, Role: string(c.Role), State: string(c.State)})
	}
	return out, err
}

func (v *fakeView) Component(ctx context.Context, name string) (assertions.Component, error) {
	cs, err := v.Components(ctx)
	for _, c := range cs {
		if c.Name == name {
			return c, err
		}
	}
	return assertions.Component{Name: name}, err
}

// The lookups no transcript sets: an empty cluster.

func (v *fakeView) ReplicaSets(context.Context, string, string) ([]assertions.ReplicaSet, error) {
	return nil, nil
}
func (v *fakeView) Endpoints(context.Context, string, string) ([]assertions.Endpoint, error) {
	return nil, nil
}
func (v *fakeView) Lease(_ context.Context, _, name string) (assertions.Lease, error) {
	return assertions.Lease{Name: name}, nil
}
func (v *fakeView) Events(context.Context, string) ([]assertions.Event, error) { return nil, nil }
func (v *fakeView) Raft(context.Context) (assertions.Raft, error) {
	return assertions.Raft{Members: []assertions.Member{}}, nil
}
func (v *fakeView) APIServers(context.Context) ([]assertions.APIServer, error) { return nil, nil }
func (v *fakeView) Audit(context.Context, map[string]any) ([]assertions.AuditEvent, error) {
	return nil, nil
}
func (v *fakeView) Trace(context.Context, string, string) (assertions.Trace, error) {
	return assertions.Trace{}, nil
}
func (v *fakeView) IPTables(_ context.Context, node string) (assertions.IPTables, error) {
	return assertions.IPTables{}, fmt.Errorf("node %s: %w", node, cluster.ErrNoNodeInternals)
}
func (v *fakeView) CRI(_ context.Context, node string) (assertions.CRI, error) {
	return assertions.CRI{}, fmt.Errorf("node %s: %w", node, cluster.ErrNoNodeInternals)
}
func (v *fakeView) Scheduling(context.Context, string, string) (assertions.Scheduling, error) {
	return assertions.Scheduling{}, nil
}
func (v *fakeView) Get(context.Context, string, string, string) (map[string]any, error) {
	return nil, nil
}
func (v *fakeView) List(context.Context, string, string, string) ([]map[string]any, error) {
	return nil, nil
}
func (v *fakeView) Can(context.Context, string, string, string, string) (bool, error) {
	return false, nil
}
func (v *fakeView) Elapsed() float64 { return 0 }

func (v *fakeView) Changed() <-chan struct{} { return v.changed }

// OnChange registers nothing: there are no informers, so no changes.
func (v *fakeView) OnChange(func(kind string, old, new any)) {}

func (v *fakeView) AskedScheduling() []assertions.Scheduling { return nil }

func (v *fakeView) Close() { v.log.addf("view: closed") }
