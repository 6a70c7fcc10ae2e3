// Package clustertest is a fake cluster.Backend for the tests of what runs
// on top of a cluster (the runner, grading, drills, the live check loop,
// the command line) without booting one: its components are rows of a
// table, made from the topology as a real backend would name them, and
// every call is written to a Log so a test can compare what happened.
//
// Pair it with assertionstest.View, the cluster's objects as the test
// sets them; engine/enginetest.Fake wires both into a Runner.
package clustertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
)

// Kubeconfig is where a Fake says its kubeconfig is: nowhere, so an
// operation that needs API clients fails saying so.
const Kubeconfig = "/nonexistent/kubelab-fake/kubeconfig"

// Log is the ordered record of what a fake (and whoever else writes to
// it) did. It is safe for concurrent use; the zero value is ready.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Addf appends a line.
func (l *Log) Addf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// Lines are the lines so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// String is the lines joined by newlines.
func (l *Log) String() string { return strings.Join(l.Lines(), "\n") }

// Faults are what a Fake is told to fail, with the error to fail with.
type Faults struct {
	// Up fails Up.
	Up error
	// Act fails an action on a component: "kill etcd-2" -> error.
	Act map[string]error
}

// Fake is a cluster.Backend whose components are rows of a table, one per
// component of the topology: Up, Down and Act are logged, Act changes a
// component's state as the action would, and each can be told to fail.
type Fake struct {
	topo   cluster.Topology
	log    *Log
	faults Faults

	mu    sync.Mutex
	comps []cluster.Component
	downs int
}

var _ cluster.Backend = (*Fake)(nil)

// New makes a fake cluster of topology t (defaulted), logging to log (a
// new Log when nil) and failing as f says.
func New(t cluster.Topology, log *Log, f Faults) *Fake {
	if log == nil {
		log = &Log{}
	}
	return &Fake{topo: t.WithDefaults(), log: log, faults: f}
}

// Factory makes a Fake for every topology it is given, as a runner's
// backend factory does, and hands each to made (may be nil).
func Factory(log *Log, f Faults, made func(*Fake)) func(cluster.Topology) (cluster.Backend, error) {
	return func(t cluster.Topology) (cluster.Backend, error) {
		b := New(t, log, f)
		if made != nil {
			made(b)
		}
		return b, nil
	}
}

// Name is "fake".
func (b *Fake) Name() string { return "fake" }

// Log is where the fake writes what it does.
func (b *Fake) Log() *Log { return b.log }

// Up makes every component of the topology, running.
func (b *Fake) Up(context.Context, func(cluster.Event)) error {
	b.log.Addf("backend: up")
	if err := b.faults.Up; err != nil {
		b.log.Addf("backend: up failed: %v", err)
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.comps = Components(b.topo)
	return nil
}

// Down removes every component.
func (b *Fake) Down(context.Context) error {
	b.log.Addf("backend: down")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.comps = nil
	b.downs++
	return nil
}

// Removed reports whether Down was called.
func (b *Fake) Removed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.downs > 0
}

// Components lists the components with their current state.
func (b *Fake) Components(context.Context) ([]cluster.Component, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.comps), nil
}

// actionState is the state an action leaves a component in.
var actionState = map[cluster.Action]cluster.State{
	cluster.Kill: cluster.StateStopped, cluster.Stop: cluster.StateStopped,
	cluster.Start: cluster.StateRunning, cluster.Restart: cluster.StateRunning, cluster.Resume: cluster.StateRunning,
	cluster.Pause: cluster.StatePaused,
}

// Act changes the component's state as the action would: kill and stop
// stop it, start, restart and resume run it, pause pauses it. Other
// actions are unsupported.
func (b *Fake) Act(_ context.Context, name string, a cluster.Action) error {
	b.log.Addf("backend: act %s %s", a, name)
	if err := b.faults.Act[string(a)+" "+name]; err != nil {
		b.log.Addf("backend: act %s %s failed: %v", a, name, err)
		return err
	}
	state, ok := actionState[a]
	if !ok {
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

// Access points at Kubeconfig, which does not exist.
func (b *Fake) Access() cluster.Access { return cluster.Access{Kubeconfig: Kubeconfig} }

// Topology is the defaulted topology.
func (b *Fake) Topology() cluster.Topology { return b.topo }

// Components are the components a backend runs for t (defaulted), all
// running: the names the lab loader lets targets use.
func Components(t cluster.Topology) []cluster.Component {
	t = t.WithDefaults()
	var out []cluster.Component
	for _, g := range []struct {
		role  cluster.Role
		names []string
	}{{cluster.RoleEtcd, controlplane.EtcdMembers(t)}, {cluster.RoleAPIServer, controlplane.APIServers(t)},
		{cluster.RoleScheduler, controlplane.Schedulers(t)}, {cluster.RoleControllerManager, controlplane.ControllerManagers(t)}} {
		for _, n := range g.names {
			out = append(out, cluster.Component{Name: n, Role: g.role, State: cluster.StateRunning})
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
