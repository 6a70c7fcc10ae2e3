package enginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
	"kubelab.dev/kubelab/engine"
)

// FakeCluster is what a Fake runner runs on: every backend it made
// (clustertest.Fake) logs to Log, and every view of them shows State.
type FakeCluster struct {
	// Log is what the backends and views did, in order.
	Log *clustertest.Log
	// StateFor, when set, gives each cluster (by name, e.g. a grading's
	// exercise-learner-hash) its own objects instead of the shared ones.
	StateFor func(cluster string) assertionstest.State
	// NodeInternals makes its backends claim real nodes
	// (cluster.NodeExecer): expressions then read State.CRI and
	// State.IPTables, and ExecNode fails.
	NodeInternals bool
	// Existing makes its backends claim no capability, as an existing
	// cluster reached through a kubeconfig does (kubeconfig.Backend).
	Existing bool

	mu       sync.Mutex
	state    assertionstest.State
	views    []*assertionstest.View
	backends []*clustertest.Fake
}

// Set changes the objects every view shows, now and for views made later,
// and signals the change as a watch event would.
func (f *FakeCluster) Set(s assertionstest.State) {
	f.mu.Lock()
	f.state = s
	views := append([]*assertionstest.View(nil), f.views...)
	f.mu.Unlock()
	for _, v := range views {
		v.Set(s)
	}
}

// Backends are the fake clusters made so far.
func (f *FakeCluster) Backends() []*clustertest.Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*clustertest.Fake(nil), f.backends...)
}

// Observe is a Runner.Observe that shows the fake's objects.
func (f *FakeCluster) Observe(_ context.Context, c *cluster.Cluster, _ time.Time) (engine.Observer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.state
	if f.StateFor != nil {
		s = f.StateFor(c.Backend.Topology().Name)
	}
	v := assertionstest.NewView(s, c.Backend)
	v.OnClose(func() { f.Log.Addf("view: closed") })
	f.views = append(f.views, v)
	f.Log.Addf("view: watching")
	return v, nil
}

// Backend is a Runner.Backend that makes clustertest fakes.
func (f *FakeCluster) Backend(t cluster.Topology) (cluster.Backend, error) {
	b := clustertest.New(t, f.Log, clustertest.Faults{})
	f.mu.Lock()
	f.backends = append(f.backends, b)
	internals, existing := f.NodeInternals, f.Existing
	f.mu.Unlock()
	if existing {
		return existingCluster{b}, nil
	}
	if internals {
		return realNodes{b}, nil
	}
	return b, nil
}

// existingCluster is a fake that, as a cluster kubelab did not make, can
// show nothing beyond its API: no Raft state, faults, records or nodes.
type existingCluster struct{ *clustertest.Fake }

// Capabilities implements cluster.Capable: none.
func (existingCluster) Capabilities() []cluster.Capability { return nil }

// realNodes is a fake whose nodes claim to be real: it is a
// cluster.NodeExecer, so the capability to look inside nodes is there.
type realNodes struct{ *clustertest.Fake }

// ExecNode runs nothing: a fake node has no processes.
func (realNodes) ExecNode(_ context.Context, node string, cmd ...string) (string, error) {
	return "", fmt.Errorf("exec %v on %s: a fake node runs nothing", cmd, node)
}

// Fake returns a Runner that runs labs, exercises and drills on fake
// clusters showing s, and the fake they run on: nothing boots, so the
// test runs under -short. Operations that need the API (apply, kubectl...)
// fail saying the kubeconfig is missing; expressions read s.
func Fake(t testing.TB, s assertionstest.State) (*engine.Runner, *FakeCluster) {
	t.Helper()
	fc := &FakeCluster{Log: &clustertest.Log{}, state: s}
	r := &engine.Runner{
		Backend: fc.Backend,
		Binary:  "/nonexistent/kubelab",
		Observe: fc.Observe,
		Progress: func(p engine.Progress) {
			msg := p.Message
			if p.Err != nil {
				msg += ": " + p.Err.Error()
			}
			t.Logf("%s | %s | %s", p.Lab, p.Step, msg)
		},
	}
	return r, fc
}
