package engine

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
)

// Session is a booted lab cluster that operations run against one at a
// time: what a lab run does step by step, opened up for drills (Gherkin
// steps) and graded exercises. Every operation goes through the same
// loader checks and the same executor as in a lab file.
type Session struct {
	x     *run
	be    cluster.Backend
	topo  cluster.Topology
	types map[string]reflect.Type
	stop  func()
	step  string
}

// Start boots a cluster for topology t and starts watching it. name names
// the session in progress output and in the cluster's name.
func (r *Runner) Start(ctx context.Context, name string, t cluster.Topology) (*Session, error) {
	return r.StartFor(ctx, name, t, nil)
}

// StartFor is Start for a session that needs more of its backend than the
// Kubernetes API (capability -> what needs it, as load.Lab.Needs says): a
// backend that lacks one is refused before anything boots, with a
// *cluster.MissingError naming it. The cluster observes what needs names
// (the audit log, the scheduler's decisions), unless t says otherwise.
func (r *Runner) StartFor(ctx context.Context, name string, t cluster.Topology, needs map[cluster.Capability]string) (*Session, error) {
	if r.Backend == nil {
		return nil, fmt.Errorf("runner has no backend")
	}
	log := r.logger()
	t = t.WithDefaults().ObserveFor(needs, r.Traces)
	t.Name = clusterName(name)
	be, err := r.Backend(t)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", name, err)
	}
	if err := cluster.CheckCapabilities(be, needs); err != nil {
		return nil, fmt.Errorf("session %s: %w", name, err)
	}
	x := r.newRun(name, be)
	x.progress("", "booting cluster %s (%s backend)", t.Name, be.Name())
	start := time.Now()
	if err := be.Up(ctx, func(e cluster.Event) { log.Debug("boot", "component", e.Component, "msg", e.Message) }); err != nil {
		x.c.Close()
		_ = be.Down(context.WithoutCancel(ctx)) // what did start must not outlive the failed session
		return nil, fmt.Errorf("session %s: cluster did not come up: %w", name, err)
	}
	x.res.BootDuration = time.Since(start)
	x.progress("", "cluster up in %s", x.res.BootDuration.Round(10*time.Millisecond))
	s, err := x.session(ctx, name, be)
	if err != nil {
		_ = be.Down(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

// Attach opens a session on a cluster that is already up (be), without
// booting it: what `kubelab check` and `kubelab solve` run on. Closing the
// session with keep leaves the cluster as it is.
func (r *Runner) Attach(ctx context.Context, name string, be cluster.Backend) (*Session, error) {
	x := r.newRun(name, be)
	return x.session(ctx, name, be)
}

// newRun is the run of a session named name on be.
func (r *Runner) newRun(name string, be cluster.Backend) *run {
	res := &Result{Lab: name, Started: time.Now(), Status: Passed}
	lab := &load.Lab{Metadata: v1alpha1.Metadata{Name: name}}
	return &run{r: r, lab: lab, c: cluster.New(be, r.logger()), bindings: map[string]any{}, res: res, bg: &background{}}
}

// session starts watching the cluster of x and returns the session.
func (x *run) session(ctx context.Context, name string, be cluster.Backend) (*Session, error) {
	x.start = time.Now()
	live, err := x.r.newObserver(ctx, x.c, x.start)
	if err != nil {
		x.c.Close()
		return nil, fmt.Errorf("session %s: watch cluster: %w", name, err)
	}
	x.live = live
	x.tl = newTimeline(x.start)
	s := &Session{x: x, be: be, topo: be.Topology(), types: map[string]reflect.Type{}}
	s.stop = x.tl.watch(ctx, x.c, live)
	return s, nil
}

// Changed receives a value after any object the session watches changed
// (pods, nodes, endpoints, leases, events...): `kubelab check --watch`
// re-evaluates on it.
func (s *Session) Changed() <-chan struct{} { return s.x.live.Changed() }

// logger is the runner's logger, or one that discards.
func (r *Runner) logger() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Cluster is the session's cluster.
func (s *Session) Cluster() *cluster.Cluster { return s.x.c }

// Topology is the session cluster's defaulted topology.
func (s *Session) Topology() cluster.Topology { return s.topo }

// Step marks the start of a named step in the timeline and progress; ops
// run after it are reported under that name.
func (s *Session) Step(name string) {
	s.step = name
	s.x.tl.add(EventStep, name, "started")
	s.x.progress(name, "started")
}

// EndStep marks the end of the current step with its status.
func (s *Session) EndStep(st Status, err error) {
	s.x.tl.add(EventStep, s.step, string(st))
	s.x.report(Progress{Step: s.step, Message: s.x.r.Words.S(string(st)), Done: true, Err: err, Skipped: st == Skipped})
}

// Prepare checks one operation as the lab loader would (shape, values,
// targets against the topology, manifests, expressions against the
// bindings recorded so far in this session) and returns it ready to Exec.
// src is the operation in lab-file YAML, e.g. `kill: {target: etcd-leader}`;
// dir resolves relative manifest files.
func (s *Session) Prepare(src, dir string) (*ops.Operation, error) {
	op, err := load.ParseOperation(src, dir, s.topo, s.types)
	if err != nil {
		return nil, err
	}
	if err := cluster.CheckCapabilities(s.be, load.OperationNeeds(op)); err != nil {
		return nil, fmt.Errorf("%s: %w", op.Summary(), err)
	}
	return op, nil
}

// PrepareOp is Prepare for an ops.Operation built in Go: it is rendered to
// YAML and checked the same way.
func (s *Session) PrepareOp(op ops.Operation, dir string) (*ops.Operation, error) {
	b, err := yaml.Marshal(op)
	if err != nil {
		return nil, fmt.Errorf("render operation: %w", err)
	}
	return s.Prepare(string(b), dir)
}

// Exec runs a prepared operation with its timeout (bounded by ctx) and
// records bindings of record operations for later expressions.
func (s *Session) Exec(ctx context.Context, op *ops.Operation) OpResult {
	r := s.x.runOp(ctx, s.step, op)
	if r.Status != Passed {
		return r
	}
	if op.Record != nil && op.Compiled() != nil {
		s.types[op.Record.Name] = op.Compiled().Type
	} else if b, ok := op.Op().(ops.Binder); ok {
		// Other binders bind a value of a type of their own (a command's
		// result, a snapshot).
		if name, _ := b.Binding(); name != "" && s.x.bindings[name] != nil {
			s.types[name] = reflect.TypeOf(s.x.bindings[name])
		}
	}
	return r
}

// Eval evaluates an expression of any type now (for showing values); the
// view bounds its own slow lookups (the Raft table, apiserver health).
func (s *Session) Eval(src string) (any, error) { return s.eval(src, assertions.Eval) }

// EvalStrict is Eval, but a failed lookup is an error that names it (see
// assertions.EvalStrict).
func (s *Session) EvalStrict(src string) (any, error) { return s.eval(src, assertions.EvalStrict) }

// eval compiles src with the session's bindings and evaluates it now
// with evaluate.
func (s *Session) eval(src string, evaluate func(context.Context, *assertions.Compiled, assertions.View, map[string]any) (any, error)) (any, error) {
	c, err := assertions.Compile(src, s.types, false)
	if err != nil {
		return nil, err
	}
	return evaluate(context.Background(), c, s.x.live, s.x.bindings)
}

// Declare makes names bound outside the session's own operations known to
// its expressions, with the static type of each (Document.Bindings): an
// exercise's setup records names its checks read. A name not bound yet
// reads as its type's zero value.
func (s *Session) Declare(types map[string]reflect.Type) {
	for k, v := range zeroBindings(types) {
		if _, ok := s.x.bindings[k]; !ok {
			s.x.bindings[k] = v
		}
	}
	for k, t := range types {
		s.types[k] = t
	}
}

// Progressf reports a line of the session's progress that belongs to no
// step (the runner's Progress receives it).
func (s *Session) Progressf(format string, args ...any) { s.x.progress("", format, args...) }

// Timeline is what happened so far.
func (s *Session) Timeline() []TimelineEvent { return s.x.tl.events() }

// Elapsed is the time since the origin of the timeline (the first step).
func (s *Session) Elapsed() time.Duration { return time.Since(s.x.tl.start) }

// Recovery is the recovery figures derived from the timeline so far.
func (s *Session) Recovery() []Recovery { return Recoveries(s.x.tl.events()) }

// BootDuration is how long the session's cluster took to come up.
func (s *Session) BootDuration() time.Duration { return s.x.res.BootDuration }

// Traces is the chain of writes, from the audit logs, behind every
// Deployment created so far.
func (s *Session) Traces(ctx context.Context) []DeploymentTrace {
	return traces(ctx, s.x.live, s.x.tl.events())
}

// Scheduling is the scheduler's last decision, plugin by plugin, about
// every pod the session's expressions asked scheduling() about.
func (s *Session) Scheduling() []assertions.Scheduling { return s.x.live.AskedScheduling() }

// RecentScheduling is the scheduler's latest decisions, newest first, at
// most n: one per pod, plugin by plugin (the live view's panel).
func (s *Session) RecentScheduling(n int) []assertions.Scheduling {
	return s.x.live.RecentScheduling(n)
}

// Metrics is the Prometheus text a control-plane component serves at
// /metrics, as metric() reads it.
func (s *Session) Metrics(ctx context.Context, component string) ([]byte, error) {
	return s.x.live.Metrics(ctx, component)
}

// Close stops watching and tears the cluster down unless keep is set, in
// which case it returns the kubeconfig of the cluster left running.
func (s *Session) Close(ctx context.Context, keep bool) (string, error) {
	s.x.stopBackground()
	s.stop()
	s.x.live.Close()
	defer s.x.c.Close()
	if keep {
		return s.be.Access().Kubeconfig, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	return "", s.be.Down(ctx)
}
