// Package assertionstest is a fake of the view expressions are evaluated
// against: the cluster's objects are what the test sets, and a change the
// test makes (Set) is signalled as a watched change would be. With
// clustertest.Fake it runs labs, checks and drills without a cluster.
package assertionstest

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

// State is the cluster's objects as a test sets them (in YAML, e.g. in a
// transcript: nodes, pods, deployments, leases, events, raft). Lookups of
// anything else see an empty cluster.
type State struct {
	Nodes       []assertions.Node       `yaml:"nodes"`
	Pods        []assertions.Pod        `yaml:"pods"`
	Deployments []assertions.Deployment `yaml:"deployments"`
	Leases      []assertions.Lease      `yaml:"leases"`
	Events      []assertions.Event      `yaml:"events"`
	Raft        assertions.Raft         `yaml:"raft"`
	// Scheduling are the scheduler's decisions, one per pod (Pod is
	// namespace/name).
	Scheduling []assertions.Scheduling `yaml:"scheduling"`
	// CRI and IPTables are what nodes show inside, by node name (nodes
	// not listed have nothing to show: kwok's).
	CRI      map[string]assertions.CRI      `yaml:"cri"`
	IPTables map[string]assertions.IPTables `yaml:"iptables"`
	// Metrics is the Prometheus text each component serves at /metrics,
	// by component name.
	Metrics map[string]string `yaml:"metrics"`
}

// normalized fills what a real view would: pods in the default namespace
// when they name none, objects that exist, lists sorted by name as the
// informers' listers return them.
func (s State) normalized() State {
	s.Pods = slices.Clone(s.Pods)
	s.Nodes = slices.Clone(s.Nodes)
	s.Deployments = slices.Clone(s.Deployments)
	for i := range s.Pods {
		if s.Pods[i].Namespace == "" {
			s.Pods[i].Namespace = assertions.DefaultNamespace
		}
	}
	slices.SortFunc(s.Pods, func(a, b assertions.Pod) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Nodes, func(a, b assertions.Node) int { return strings.Compare(a.Name, b.Name) })
	for i := range s.Nodes {
		s.Nodes[i].Exists = true
	}
	for i := range s.Deployments {
		s.Deployments[i].Exists = true
	}
	if s.Raft.Members == nil {
		s.Raft.Members = []assertions.Member{}
	}
	return s
}

// View is an observer without informers: its objects are the State the
// test set, and its components are the backend's, read at each
// evaluation as the real view reads them.
type View struct {
	be cluster.Backend

	mu      sync.Mutex
	state   State
	closed  bool
	changed chan struct{}
	onClose func()
}

// NewView makes a view of s whose components are be's.
func NewView(s State, be cluster.Backend) *View {
	return &View{be: be, state: s.normalized(), changed: make(chan struct{}, 1)}
}

// OnClose sets a function called when the view is closed (e.g. to log it).
func (v *View) OnClose(f func()) { v.onClose = f }

// Set replaces the objects and signals a change, as a watch event would.
func (v *View) Set(s State) {
	v.mu.Lock()
	v.state = s.normalized()
	v.mu.Unlock()
	select {
	case v.changed <- struct{}{}:
	default:
	}
}

// Update changes the objects in place and signals a change.
func (v *View) Update(f func(*State)) {
	v.mu.Lock()
	s := v.state
	v.mu.Unlock()
	f(&s)
	v.Set(s)
}

// Closed reports whether Close was called.
func (v *View) Closed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.closed
}

func (v *View) get() State {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state
}

// Pods are the pods of namespace that match selector.
func (v *View) Pods(_ context.Context, namespace, selector string) ([]assertions.Pod, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	out := []assertions.Pod{}
	for _, p := range v.get().Pods {
		if p.Namespace == namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Pod is one pod; one that is not set has only its name and namespace.
func (v *View) Pod(_ context.Context, namespace, name string) (assertions.Pod, error) {
	for _, p := range v.get().Pods {
		if p.Namespace == namespace && p.Name == name {
			return p, nil
		}
	}
	return assertions.Pod{Name: name, Namespace: namespace}, nil
}

// Nodes are the nodes set.
func (v *View) Nodes(context.Context) ([]assertions.Node, error) {
	return slices.Clone(v.get().Nodes), nil
}

// Node is one node; one that is not set does not exist.
func (v *View) Node(_ context.Context, name string) (assertions.Node, error) {
	for _, n := range v.get().Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return assertions.Node{Name: name}, nil
}

// Deployment is one Deployment, in any namespace.
func (v *View) Deployment(_ context.Context, _, name string) (assertions.Deployment, error) {
	for _, d := range v.get().Deployments {
		if d.Name == name {
			return d, nil
		}
	}
	return assertions.Deployment{Name: name}, nil
}

// Components are the backend's, as assertions see them.
func (v *View) Components(ctx context.Context) ([]assertions.Component, error) {
	cs, err := v.be.Components(ctx)
	out := make([]assertions.Component, 0, len(cs))
	for _, c := range cs {
		out = append(out, assertions.Component{Name: c.Name, Role: string(c.Role), State: string(c.State)})
	}
	return out, err
}

// Component is one of Components.
func (v *View) Component(ctx context.Context, name string) (assertions.Component, error) {
	cs, err := v.Components(ctx)
	for _, c := range cs {
		if c.Name == name {
			return c, err
		}
	}
	return assertions.Component{Name: name}, err
}

// Lease is the lease set with that name, in any namespace.
func (v *View) Lease(_ context.Context, _, name string) (assertions.Lease, error) {
	for _, l := range v.get().Leases {
		if l.Name == name {
			return l, nil
		}
	}
	return assertions.Lease{Name: name}, nil
}

// Events are the events set with that reason ("" = all).
func (v *View) Events(_ context.Context, reason string) ([]assertions.Event, error) {
	var out []assertions.Event
	for _, e := range v.get().Events {
		if reason == "" || e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

// Raft is the Raft table set.
func (v *View) Raft(context.Context) (assertions.Raft, error) { return v.get().Raft, nil }

// The lookups a State does not set: an empty cluster.

// ReplicaSets are none.
func (v *View) ReplicaSets(context.Context, string, string) ([]assertions.ReplicaSet, error) {
	return nil, nil
}

// Endpoints are none.
func (v *View) Endpoints(context.Context, string, string) ([]assertions.Endpoint, error) {
	return nil, nil
}

// APIServers are none.
func (v *View) APIServers(context.Context) ([]assertions.APIServer, error) { return nil, nil }

// Audit is empty.
func (v *View) Audit(context.Context, map[string]any) ([]assertions.AuditEvent, error) {
	return nil, nil
}

// Trace is empty.
func (v *View) Trace(context.Context, string, string) (assertions.Trace, error) {
	return assertions.Trace{}, nil
}

// IPTables is the state's nat table of node; a node it has none of is
// simulated.
func (v *View) IPTables(_ context.Context, node string) (assertions.IPTables, error) {
	if t, ok := v.get().IPTables[node]; ok {
		return t, nil
	}
	return assertions.IPTables{}, fmt.Errorf("node %s: %w", node, cluster.ErrNoNodeInternals)
}

// CRI is the state's sandboxes and containers of node; a node it has
// none of is simulated.
func (v *View) CRI(_ context.Context, node string) (assertions.CRI, error) {
	if c, ok := v.get().CRI[node]; ok {
		return c, nil
	}
	return assertions.CRI{}, fmt.Errorf("node %s: %w", node, cluster.ErrNoNodeInternals)
}

// Scheduling is the state's decision about namespace/name (none found
// when it has none).
func (v *View) Scheduling(_ context.Context, namespace, name string) (assertions.Scheduling, error) {
	for _, d := range v.get().Scheduling {
		if d.Pod == namespace+"/"+name {
			return d, nil
		}
	}
	return assertions.Scheduling{}, nil
}

// Metrics is the state's metrics text of component; one it has none of
// serves none.
func (v *View) Metrics(_ context.Context, component string) ([]byte, error) {
	if t, ok := v.get().Metrics[component]; ok {
		return []byte(t), nil
	}
	return nil, fmt.Errorf("no component %q serves metrics here", component)
}

// RecentScheduling is the state's decisions, newest first, at most n.
func (v *View) RecentScheduling(n int) []assertions.Scheduling {
	ds := slices.Clone(v.get().Scheduling)
	slices.SortStableFunc(ds, func(a, b assertions.Scheduling) int { return b.Time.Compare(a.Time) })
	return ds[:min(n, len(ds))]
}

// Get finds nothing.
func (v *View) Get(context.Context, string, string, string) (map[string]any, error) {
	return nil, nil
}

// List finds nothing.
func (v *View) List(context.Context, string, string, string) ([]map[string]any, error) {
	return nil, nil
}

// Can allows nothing.
func (v *View) Can(context.Context, string, string, string, string) (bool, error) {
	return false, nil
}

// Elapsed is always 0: a fake view has no clock.
func (v *View) Elapsed() float64 { return 0 }

// Changed receives a value after Set.
func (v *View) Changed() <-chan struct{} { return v.changed }

// OnChange registers nothing: there are no informers, so no object
// changes to hand to a timeline.
func (v *View) OnChange(func(kind string, old, new any)) {}

// AskedScheduling is none.
func (v *View) AskedScheduling() []assertions.Scheduling { return nil }

// Close stops the view.
func (v *View) Close() {
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	if v.onClose != nil {
		v.onClose()
	}
}
