package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
	"kubelab.dev/kubelab/report"
)

// NewBackend makes the backend a lab runs on from its topology.
type NewBackend func(cluster.Topology) (cluster.Backend, error)

// Runner runs loaded labs.
type Runner struct {
	// Backend makes the lab's cluster.
	Backend NewBackend
	// Binary is the kubelab executable, for kubectl operations.
	Binary string
	// Progress receives live progress (may be nil).
	Progress func(Progress)
	// Words writes the progress messages in the learner's language (nil:
	// English).
	Words *i18n.Printer
	// KeepOnFailure leaves the cluster up when the lab fails.
	KeepOnFailure bool
	// Traces keeps the apiservers' audit log on for every run, for the
	// apply traces an HTML report draws. Otherwise a cluster observes
	// only what its lab, drill or exercise reads (cluster.Topology.ObserveFor).
	Traces bool
	// Log receives debug logs (may be nil).
	Log *slog.Logger

	// Observe watches a lab's booted cluster; nil is assertions.NewLive.
	// Tests set a fake (enginetest.Fake) to run labs without a cluster.
	Observe func(ctx context.Context, c *cluster.Cluster, start time.Time) (Observer, error)
}

// Observer is what a lab run reads of its cluster: the view expressions
// are evaluated against, the changes the timeline records, and the
// scheduling decisions its expressions asked about.
type Observer interface {
	ops.View
	// OnChange registers a handler for every change of a watched object
	// (see assertions.Live.OnChange).
	OnChange(f func(kind string, old, new any))
	// AskedScheduling is the scheduler's last decision about every pod
	// scheduling() was asked about.
	AskedScheduling() []assertions.Scheduling
	// RecentScheduling is the scheduler's latest decisions, newest first,
	// at most n.
	RecentScheduling(n int) []assertions.Scheduling
	// Close stops watching.
	Close()
}

var _ Observer = (*assertions.Live)(nil)

// newObserver starts observing c: informers against its apiserver, unless
// the runner was given another observer.
func (r *Runner) newObserver(ctx context.Context, c *cluster.Cluster, start time.Time) (Observer, error) {
	if r.Observe != nil {
		return r.Observe(ctx, c, start)
	}
	return assertions.NewLive(ctx, c, start)
}

// Progress is one line of live progress.
type Progress struct {
	Lab     string
	Step    string
	Message string
	Elapsed time.Duration
	// Done is set when the step ended; Err is its failure, if any, or
	// with Skipped the reason it did not run.
	Done    bool
	Err     error
	Skipped bool
}

// The results of a run are the report model (package report): the
// runner fills them, report.WriteJSON writes them and the HTML page draws
// them as they are. Their names here are the runner's.
type (
	// Status of a step or lab.
	Status = report.Status
	// Result is the outcome of one lab.
	Result = report.Lab
	// StepResult is the outcome of one step.
	StepResult = report.Step
	// OpResult is the outcome of one operation.
	OpResult = report.Op
	// DrillAnswer is an interview drill's question and answers in a report.
	DrillAnswer = report.Drill
	// KeyPointScore is how an answer fared on one key point of a drill.
	KeyPointScore = report.KeyPoint
	// GradeScore is the score line of a graded submission in a lab report
	// (package grade draws a grade as a Result).
	GradeScore = report.Score
)

// Statuses.
const (
	Passed      = report.Passed
	Failed      = report.Failed
	Skipped     = report.Skipped
	Errored     = report.Errored
	Interrupted = report.Interrupted
)

// CheckFailure is the error of a wait, assert or error operation that
// failed: what was expected, what was seen at the last evaluation, and how
// long it waited.
type CheckFailure = ops.CheckFailure

// run is the state of one lab run.
type run struct {
	r        *Runner
	lab      *load.Lab
	c        *cluster.Cluster
	live     Observer
	bindings map[string]any
	tl       *timeline
	start    time.Time
	res      *Result
	clients  *api
	bg       *background
	// stepsFailed: a step failed and did not continue on error, so the
	// next ones are skipped.
	stepsFailed bool
}

// Run boots the lab's cluster, runs its steps and hooks, and tears the
// cluster down (unless it failed and KeepOnFailure is set). The returned
// error is only for runs that could not be made; a lab that fails returns a
// Result with Status Failed and a nil error.
func (r *Runner) Run(ctx context.Context, lab *load.Lab) (*Result, error) {
	if r.Backend == nil {
		return nil, errors.New("runner has no backend")
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := &Result{Lab: lab.Metadata.Name, Title: lab.Metadata.Title, File: lab.File(), Started: time.Now(), Status: Passed}
	stopped := ctx.Err // the caller's: an interruption, not the lab's deadline
	ctx, cancel := context.WithTimeout(ctx, lab.Timeout())
	defer cancel()
	topo := lab.Spec.Cluster.ObserveFor(lab.Needs(), r.Traces)
	topo.Name = clusterName(lab.Metadata.Name)
	be, err := r.Backend(topo)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", lab.Metadata.Name, err)
	}
	topo.Name = be.Topology().Name // the factory may name it (--name)
	if err := lab.CheckBackend(be); err != nil {
		return nil, err
	}
	c := cluster.New(be, log)
	defer c.Close()
	x := &run{r: r, lab: lab, c: c, bindings: zeroBindings(lab.Bindings()), start: time.Now(), res: res, bg: &background{}}
	x.progress("", "booting cluster %s (%s backend)", topo.Name, be.Name())
	bootStart := time.Now()
	err = be.Up(ctx, func(e cluster.Event) { log.Debug("boot", "component", e.Component, "msg", e.Message) })
	res.BootDuration = time.Since(bootStart)
	keep := false
	defer func() {
		if keep {
			res.Kubeconfig = be.Access().Kubeconfig
			x.progress("", "cluster kept: KUBECONFIG=%s (remove it with kubelab down --name %s)", res.Kubeconfig, topo.Name)
			return
		}
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer dcancel()
		if derr := be.Down(dctx); derr != nil {
			log.Warn("tear down", "err", derr)
		}
	}()
	if err != nil {
		res.Status, res.Error = Errored, fmt.Sprintf("cluster did not come up: %v", err)
		if stopped() != nil {
			res.Status, res.Error = Interrupted, "interrupted while the cluster booted"
		}
		res.Duration = time.Since(res.Started)
		return res, nil
	}
	x.progress("", "cluster up in %s", res.BootDuration.Round(10*time.Millisecond))
	x.start = time.Now()
	live, err := r.newObserver(ctx, c, x.start)
	if err != nil {
		res.Status, res.Error = Errored, fmt.Sprintf("watch cluster: %v", err)
		return res, nil
	}
	defer live.Close()
	x.live = live
	x.tl = newTimeline(x.start)
	stopWatch := x.tl.watch(ctx, c, live)
	x.runSteps(ctx)
	x.stopBackground()
	stopWatch()
	res.Timeline = x.tl.events()
	res.Traces = traces(ctx, live, res.Timeline)
	res.Pipeline = refused(ctx, live, x.start)
	res.Scheduling = live.AskedScheduling()
	res.Recovery = Recoveries(res.Timeline)
	res.Duration = time.Since(res.Started)
	if stopped() != nil {
		// What failed then failed because of it.
		res.Status, res.Error = Interrupted, "interrupted"
		for i := range res.Steps {
			if res.Steps[i].Status == Failed {
				res.Steps[i].Status = Interrupted
			}
		}
	}
	keep = (res.Status == Failed || res.Status == Errored) && r.KeepOnFailure
	return res, nil
}

func (x *run) runSteps(ctx context.Context) {
	for i := range x.lab.Spec.Steps {
		x.stepAt(ctx, i)
	}
	x.endSteps(ctx)
}

// stepAt runs step i (skipped after a failed step that does not continue
// on error) and records it in the result.
func (x *run) stepAt(ctx context.Context, i int) StepResult {
	st := &x.lab.Spec.Steps[i]
	if x.stepsFailed {
		sr := StepResult{Name: st.Name, Status: Skipped}
		x.res.Steps = append(x.res.Steps, sr)
		return sr
	}
	sr := x.runStep(ctx, st)
	x.res.Steps = append(x.res.Steps, sr)
	if sr.Status == Failed {
		x.res.Status = Failed
		if x.res.Error == "" {
			x.res.Error = fmt.Sprintf("step %q: %s", st.Name, sr.Error)
		}
		x.stepsFailed = !st.ContinueOnError
	}
	return sr
}

// endSteps runs the hooks: catch after a failure, then finally and
// cleanup.
func (x *run) endSteps(ctx context.Context) {
	// Hooks run even when the lab's deadline has passed, with their own.
	hctx := context.WithoutCancel(ctx)
	if x.res.Status == Failed {
		x.hooks(hctx, "catch", x.lab.Spec.Catch)
	}
	x.hooks(hctx, "finally", x.lab.Spec.Finally)
	x.hooks(hctx, "cleanup", x.lab.Spec.Cleanup)
}

// hooks runs a hook's operations, each whatever the one before did. A
// failing finally or cleanup operation fails a lab that had passed: what
// it was to undo may still be there (on a shared cluster, someone else's
// clutter).
func (x *run) hooks(ctx context.Context, name string, hook []ops.Operation) {
	for i := range hook {
		r := x.runOp(ctx, name, &hook[i])
		r.Summary = name + ": " + r.Summary
		x.res.Hooks = append(x.res.Hooks, r)
		if r.Status == Failed && name != "catch" && x.res.Status != Failed {
			x.res.Status = Failed
			x.res.Error = fmt.Sprintf("%s: %s (%s:%d): %s", name, r.Kind, x.lab.File(), r.Line, r.Error)
		}
	}
}

func (x *run) runStep(ctx context.Context, st *load.Step) StepResult {
	start := time.Now()
	x.tl.add(EventStep, st.Name, "started")
	x.progress(st.Name, "started")
	if d := st.Timeout.Duration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	sr := StepResult{Name: st.Name, Status: Passed}
	for i := range st.Try {
		or := x.runOp(ctx, st.Name, &st.Try[i])
		sr.Ops = append(sr.Ops, or)
		if or.Status == Failed {
			sr.Status, sr.Error = Failed, fmt.Sprintf("%s (%s:%d): %s", or.Kind, x.lab.File(), or.Line, or.Error)
			break
		}
	}
	if sr.Status == Failed && x.c != nil {
		// A wait that never ended is most often explained by a component
		// that died: its last lines go with the failure.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if tails := x.c.ExitedTails(tctx, exitedLines); tails != "" {
			sr.Error += "\n" + tails
		}
		cancel()
	}
	sr.Duration = time.Since(start)
	x.tl.add(EventStep, st.Name, string(sr.Status))
	var err error
	if sr.Status == Failed {
		err = errors.New(sr.Error)
	}
	x.report(Progress{Step: st.Name, Message: x.r.Words.S(string(sr.Status)), Done: true, Err: err})
	return sr
}

// exitedLines is how many of its last lines a component that exited on
// its own shows in a failed step's error.
const exitedLines = 12

func (x *run) runOp(ctx context.Context, step string, op *ops.Operation) OpResult {
	kind := op.Kind()
	or := OpResult{Kind: kind, Line: op.Pos().Line, Summary: op.Summary(), Status: Passed}
	if op.Background != "" {
		x.startBackground(step, op)
		or.Summary += " (in the background as " + op.Background + ")"
		or.Output = "started"
		return or
	}
	ctx, cancel := context.WithTimeout(ctx, op.TimeLimit())
	defer cancel()
	start := time.Now()
	x.progress(step, "%s", or.Summary)
	out, err := x.exec(ctx, op)
	or.Duration, or.Output, or.Bind = time.Since(start), out, boundName(op)
	if err == nil {
		if text := outputLines(Shown(or), shownLines); text != "" {
			x.progress(step, "%s", text)
		}
	}
	if err != nil {
		or.Status, or.Error = Failed, err.Error()
		var cf *CheckFailure
		if errors.As(err, &cf) {
			or.Observed = cf.Observed
		}
	}
	return or
}

// Shown is what a learner reads of an operation's output as the lab
// runs (the progress, the browser view): the output of a command (script,
// kubectl, nodeExec) that passed and did not bind it to a name for the
// lab's own use (a Service's JSON for a later step). A failed command's
// output is in its error.
func Shown(r OpResult) string {
	switch {
	case r.Status != Passed || r.Bind != "":
		return ""
	case r.Kind == "script" || r.Kind == "kubectl" || r.Kind == "nodeExec":
		return strings.TrimRight(r.Output, "\n")
	}
	return ""
}

// boundName is the name op binds its result to ("" when none).
func boundName(op *ops.Operation) string {
	b, ok := op.Op().(ops.Binder)
	if !ok {
		return ""
	}
	name, _ := b.Binding()
	return name
}

// shownLines is how many lines of a command's output the progress shows;
// the reports keep all of it.
const shownLines = 20

// outputLines is a command's output for the progress, each line marked
// "> ", cut after n lines with a count of the rest ("" when empty).
func outputLines(out string, n int) string {
	out = strings.TrimRight(out, "\n")
	if strings.TrimSpace(out) == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == n {
			fmt.Fprintf(&b, "> ... %d more lines (in the reports)\n", len(lines)-n)
			break
		}
		b.WriteString("> " + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (x *run) progress(step, format string, args ...any) {
	x.report(Progress{Step: step, Message: x.r.Words.Sprintf(format, args...)})
}

func (x *run) report(p Progress) {
	if x.r.Progress == nil {
		return
	}
	p.Lab = x.lab.Metadata.Name
	p.Elapsed = time.Since(x.res.Started)
	x.r.Progress(p)
}

// clusterName derives a unique cluster name from a lab name.
func clusterName(lab string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	if len(lab) > 30 {
		lab = strings.TrimRight(lab[:30], "-")
	}
	return lab + "-" + hex.EncodeToString(b)
}

// zeroBindings gives every binding of the lab its zero value, so hooks can
// refer to a binding whose record did not run.
func zeroBindings(types map[string]reflect.Type) map[string]any {
	out := map[string]any{}
	for k, t := range types {
		if t != nil {
			out[k] = reflect.Zero(t).Interface()
		}
	}
	return out
}
