package features

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
)

// ScenarioTimeout bounds one scenario, cluster boot included.
const ScenarioTimeout = load.DefaultLabTimeout

// Library binds the step phrases to a Runner: it boots one cluster per
// scenario (at the first step that needs it), runs every step as engine
// operations on that cluster's Session, and tears the cluster down after
// the scenario.
type Library struct {
	// Runner boots clusters and runs operations.
	Runner *engine.Runner
	// KeepOnFailure leaves the cluster of a failed scenario up.
	KeepOnFailure bool
	// Out receives messages meant for the reader: suggestions for undefined
	// steps and where a kept cluster is. Nil discards them.
	Out io.Writer
	// OnScenario, when set, is called after each scenario with what
	// happened, before its cluster is torn down.
	OnScenario func(Report)
	// Evidence are expressions read at the end of each scenario, before
	// its cluster is torn down (the key points' evidence): their values
	// go to Report.Evidence; one the scenario cannot evaluate (a name it
	// never recorded) is left out.
	Evidence []string
	// Lang is the language steps and scenario titles are shown in (the
	// feature files' catalogs, package i18n); they run in English.
	Lang i18n.Lang

	catalogs catalogs
}

// Report is what happened in one scenario.
type Report struct {
	// Feature is the feature file; Scenario the scenario's name.
	Feature, Scenario string
	// Title is the scenario's name in the Library's language.
	Title string
	// Err is the scenario's failure, nil when it passed or was skipped.
	Err error
	// Skipped says why the scenario did not run to its end when its
	// backend lacks something a step needs (etcd's Raft state, a fault,
	// real nodes...): the refusal of the first such step. Empty when it ran.
	Skipped string
	// Started is when the scenario started.
	Started time.Time
	// Duration of the scenario, cluster boot and tear-down included.
	Duration time.Duration
	// BootDuration is how long its cluster took to come up (0 when the
	// scenario never needed one).
	BootDuration time.Duration
	// Steps are the scenario's Gherkin steps in order, each with its
	// status (the steps after a failed one are skipped), duration, error
	// and the engine operations it ran.
	Steps []engine.StepResult
	// Timeline is what the cluster did, from the engine's watch.
	Timeline []engine.TimelineEvent
	// Recovery pairs each fault with the recoveries that followed it.
	Recovery []engine.Recovery
	// Traces are the chains of writes, from the audit logs, behind each
	// Deployment the scenario created.
	Traces []engine.DeploymentTrace
	// Scheduling is the scheduler's last decision about every pod the
	// scenario's expressions asked scheduling() about.
	Scheduling []assertions.Scheduling
	// Kubeconfig of the cluster kept after a failure.
	Kubeconfig string
	// Evidence are the values of Library.Evidence's expressions at the
	// scenario's end, by expression.
	Evidence map[string]string
	// Drill is set (by kubelab drill) on a drill's last scenario: its
	// question, the learner's answer and the key points' scores.
	Drill *engine.DrillAnswer
}

// scenario is the state of one running scenario; it travels in the
// context.Context godog hands from step to step.
type scenario struct {
	lib     *Library
	ctx     context.Context // the scenario's context: the cluster's watches live in it
	cancel  context.CancelFunc
	feature string
	name    string
	dir     string
	started time.Time

	topo     cluster.Topology
	sess     *engine.Session
	steps    []*godog.Step
	say      func(string) string // a text of the feature in the Library's language
	cur      int                 // index of the running step in steps
	marked   bool                // the running step is marked in the session's timeline
	failed   bool
	skipped  string // why the backend cannot run the scenario (see Report.Skipped)
	last     engine.OpResult
	keywords []string            // of steps, from the feature file
	results  []engine.StepResult // of the steps that ended
	begun    time.Time           // when the running step started
	ops      []engine.OpResult   // the running step's operations
	vars     map[string]string
	facts    map[string]bool   // bindings recorded: etcdBefore, schedulerBefore...
	follows  map[string]string // outcome step ID -> the kubectl step it was folded into
	checks   []func() engine.OpResult
}

type scenarioKey struct{}

// current returns the scenario of ctx.
func current(ctx context.Context) (*scenario, error) {
	s, ok := ctx.Value(scenarioKey{}).(*scenario)
	if !ok {
		return nil, errors.New("no scenario in context: the step library's hooks are not installed")
	}
	return s, nil
}

// InitializeScenario installs the step phrases and the hooks that give
// each scenario its state and cluster. Use it as godog's
// ScenarioInitializer.
func (l *Library) InitializeScenario(sc *godog.ScenarioContext) {
	for _, st := range catalog() {
		sc.Step(st.re, st.fn)
	}
	sc.Before(l.before)
	sc.StepContext().Before(beforeStep)
	sc.StepContext().After(l.afterStep)
	sc.After(l.after)
}

func (l *Library) before(ctx context.Context, p *godog.Scenario) (context.Context, error) {
	s := &scenario{
		lib: l, feature: p.Uri, name: p.Name, dir: filepath.Dir(p.Uri), started: time.Now(), steps: p.Steps,
		vars: map[string]string{}, facts: map[string]bool{}, follows: map[string]string{},
	}
	s.keywords = stepKeywords(p.Uri, p.Name, len(p.Steps))
	l.catalogs.lang = l.Lang
	s.say = l.catalogs.texts(p.Uri)
	ctx = context.WithValue(ctx, scenarioKey{}, s)
	s.ctx, s.cancel = context.WithTimeout(ctx, ScenarioTimeout)
	return s.ctx, nil
}

func beforeStep(ctx context.Context, st *godog.Step) (context.Context, error) {
	s, err := current(ctx)
	if err != nil {
		return ctx, err
	}
	for i, p := range s.steps {
		if p.Id == st.Id {
			s.cur = i
		}
	}
	s.marked, s.begun, s.ops = false, time.Now(), nil
	if s.sess != nil && !s.failed && s.skipped == "" {
		s.sess.Step(s.text(st.Text))
		s.marked = true
	}
	return ctx, nil
}

func (l *Library) afterStep(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
	s, cerr := current(ctx)
	if cerr != nil {
		return ctx, cerr
	}
	var hint error
	if status == godog.StepUndefined {
		hint = undefinedError(st.Text)
		if l.Out != nil {
			fmt.Fprintf(l.Out, "%s\n", hint)
		}
	}
	es := engine.Passed
	switch status {
	case godog.StepPassed:
	case godog.StepSkipped:
		es = engine.Skipped
	default:
		es = engine.Failed
	}
	s.endStep(st, es, errors.Join(err, hint))
	if s.marked {
		s.sess.EndStep(es, errors.Join(err, hint))
		s.marked = false
	}
	if status != godog.StepPassed && status != godog.StepSkipped {
		s.failed = true
	}
	return ctx, hint
}

func (l *Library) after(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
	s, cerr := current(ctx)
	if cerr != nil {
		return ctx, cerr
	}
	defer s.cancel()
	var errs []error
	for _, stop := range s.checks {
		if r := stop(); r.Status != engine.Passed && err == nil && s.skipped == "" {
			errs = append(errs, fmt.Errorf("%s: %s (the scenario never checked its result)", r.Summary, r.Error))
		}
	}
	s.checks = nil
	if errors.Is(err, godog.ErrSkip) {
		err = nil // s.skipped says why
	}
	rep := Report{Feature: s.feature, Scenario: s.name, Title: s.text(s.name), Err: errors.Join(append([]error{err}, errs...)...),
		Skipped: s.skipped, Started: s.started, Duration: time.Since(s.started), Steps: s.stepResults()}
	if s.sess == nil {
		if l.OnScenario != nil {
			l.OnScenario(rep)
		}
		return ctx, errors.Join(errs...)
	}
	if rep.Err != nil {
		// As a failed lab step: the last lines of any component that died.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if tails := s.sess.Cluster().ExitedTails(tctx, 12); tails != "" {
			rep.Err = errors.Join(rep.Err, errors.New(tails))
		}
		cancel()
	}
	rep.Timeline, rep.Recovery, rep.BootDuration = s.sess.Timeline(), s.sess.Recovery(), s.sess.BootDuration()
	rep.Traces, rep.Scheduling = s.sess.Traces(ctx), s.sess.Scheduling()
	rep.Evidence = s.evidence(l.Evidence)
	keep := l.KeepOnFailure && rep.Err != nil
	kc, cerr := s.sess.Close(context.WithoutCancel(ctx), keep)
	if cerr != nil {
		errs = append(errs, fmt.Errorf("tear down the cluster of %q: %w", s.name, cerr))
	}
	rep.Duration = time.Since(s.started)
	if keep {
		rep.Kubeconfig = kc
		if l.Out != nil {
			fmt.Fprintf(l.Out, "cluster of %q kept: export KUBECONFIG=%s (remove it with kubelab down --name %s)\n",
				s.name, kc, s.sess.Topology().Name)
		}
	}
	if l.OnScenario != nil {
		l.OnScenario(rep)
	}
	ctx = godog.Attach(ctx, godog.Attachment{FileName: "timeline.txt", MediaType: "text/plain", Body: []byte(formatTimeline(rep))})
	return ctx, errors.Join(errs...)
}

// formatTimeline renders a report's timeline and recovery figures.
func formatTimeline(r Report) string {
	var b strings.Builder
	for _, e := range r.Timeline {
		fmt.Fprintf(&b, "%s\n", e)
	}
	for _, rc := range r.Recovery {
		fmt.Fprintf(&b, "recovery: %s\n", rc.Describe)
	}
	return b.String()
}

// configure changes the topology of a cluster that is not booted yet.
func (s *scenario) configure(change func(*cluster.Topology) error) error {
	if s.sess != nil {
		return errors.New("the cluster is already up: set its topology and timings before the first step that uses it")
	}
	t := s.topo
	if err := change(&t); err != nil {
		return err
	}
	check := t.WithDefaults()
	check.Name = "check"
	if errs := check.Validate(); len(errs) > 0 {
		return fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	s.topo = t
	return nil
}

// session returns the scenario's cluster session, booting the cluster at
// the first step that needs it.
func (s *scenario) session() (*engine.Session, error) {
	if s.sess != nil {
		return s.sess, nil
	}
	if s.lib.Runner == nil {
		return nil, errors.New("the step library has no Runner")
	}
	name := slug(strings.TrimSuffix(filepath.Base(s.feature), filepath.Ext(s.feature)))
	texts := make([]string, len(s.steps))
	for i, st := range s.steps {
		texts[i] = st.Text
	}
	sess, err := s.lib.Runner.StartFor(s.ctx, name, s.topo, observeNeeds(texts))
	if err != nil {
		return nil, s.skipIfMissing(fmt.Errorf("boot the cluster of %q: %w", s.name, err))
	}
	s.sess = sess
	if _, set := s.vars["NAMESPACE"]; !set {
		s.vars["NAMESPACE"] = sess.Cluster().Namespace() // the run's own on a shared cluster
	}
	sess.Step(s.text(s.steps[s.cur].Text))
	s.marked = true
	return sess, nil
}

// prepare checks an operation against the session as the lab loader would.
func (s *scenario) prepare(op ops.Operation) (*engine.Session, *ops.Operation, error) {
	sess, err := s.session()
	if err != nil {
		return nil, nil, err
	}
	p, err := sess.PrepareOp(op, s.dir)
	if err != nil {
		return nil, nil, s.skipIfMissing(fmt.Errorf("prepare operation: %w", err))
	}
	return sess, p, nil
}

// skipIfMissing turns a refusal for something the backend lacks into a
// skip of the scenario's remaining steps (godog.ErrSkip), recorded as the
// scenario's reason; other errors stay failures.
func (s *scenario) skipIfMissing(err error) error {
	if !errors.Is(err, cluster.ErrMissingCapability) {
		return err
	}
	s.skipped = err.Error()
	return skipError{err}
}

// skipError is a step's refusal that skips the rest of its scenario: it
// is godog.ErrSkip to godog, and reads as the refusal it wraps.
type skipError struct{ reason error }

func (e skipError) Error() string        { return e.reason.Error() }
func (e skipError) Unwrap() error        { return e.reason }
func (e skipError) Is(target error) bool { return target == godog.ErrSkip }

// run prepares and executes one operation and turns a failed result into
// an error that carries its expected and observed values.
func (s *scenario) run(ctx context.Context, op ops.Operation) (engine.OpResult, error) {
	sess, p, err := s.prepare(op)
	if err != nil {
		return engine.OpResult{}, err
	}
	return s.result(sess.Exec(ctx, p))
}

// runAll runs operations in order until one fails.
func (s *scenario) runAll(ctx context.Context, all ...ops.Operation) error {
	for _, op := range all {
		if _, err := s.run(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

// eventually prepares an operation and retries it until it passes.
func (s *scenario) eventually(ctx context.Context, op ops.Operation, within time.Duration) (engine.OpResult, error) {
	sess, p, err := s.prepare(op)
	if err != nil {
		return engine.OpResult{}, err
	}
	return s.result(sess.Eventually(ctx, p, within))
}

func (s *scenario) result(r engine.OpResult) (engine.OpResult, error) {
	s.last = r
	s.ops = append(s.ops, r)
	if r.Status != engine.Passed {
		return r, fmt.Errorf("%s: %s", r.Summary, r.Error)
	}
	return r, nil
}

// dur wraps a duration for an Operation.
func dur(d time.Duration) cluster.Duration { return cluster.Duration{Duration: d} }
