package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

// Grade statuses: a submission was graded; nothing of it respected the
// contract, so no cluster was booted and it scores 0 (the learner's
// problem); or grading could not be done (the cluster did not come up, the
// exercise's setup failed, grading was interrupted: the grader's problem).
const (
	Graded       = "graded"
	GradeRefused = "refused"
	GradeError   = "error"
)

// Grade is the outcome of grading one submission.
type Grade struct {
	// Exercise is the exercise's name.
	Exercise string `json:"exercise"`
	// Title is the exercise's title.
	Title string `json:"title"`
	// File is the exercise file.
	File string `json:"file"`
	// Learner names the submission (its directory name in a batch).
	Learner string `json:"learner,omitempty"`
	// Submission is the submission directory.
	Submission string `json:"submission"`
	// Status is Graded, GradeRefused or GradeError.
	Status string `json:"status"`
	// Error says why a submission could not be graded.
	Error string `json:"error,omitempty"`
	// Score is the points of the checks that passed.
	Score int `json:"score"`
	// Max is the points of all checks.
	Max int `json:"max"`
	// PassingScore is the score needed to pass.
	PassingScore int `json:"passingScore"`
	// Passed says whether Score reached PassingScore (never when Status
	// is GradeError).
	Passed bool `json:"passed"`
	// TimedOut is set when the exercise's time limit ended grading; the
	// checks that had not run scored nothing.
	TimedOut bool `json:"timedOut,omitempty"`
	// Started is when grading started.
	Started time.Time `json:"started"`
	// Duration is how long grading took, boot and teardown included.
	Duration time.Duration `json:"duration"`
	// BootDuration is how long the cluster took to come up.
	BootDuration time.Duration `json:"bootDuration"`
	// Refused lists what the submission had that was not applied.
	Refused []Refusal `json:"refused"`
	// Objects lists the submission's objects that were sent to the
	// cluster and whether the API server accepted them.
	Objects []AppliedObject `json:"objects"`
	// Ignored lists files of the submission that are not manifests.
	Ignored []string `json:"ignored,omitempty"`
	// Setup is the exercise's setup operations.
	Setup []OpResult `json:"setup,omitempty"`
	// Checks is every check, in order.
	Checks []CheckResult `json:"checks"`
	// Timeline is what happened on the cluster during grading.
	Timeline []TimelineEvent `json:"timeline"`
	// Kubeconfig of a cluster kept for inspection.
	Kubeconfig string `json:"kubeconfig,omitempty"`
}

// AppliedObject is one object of the submission sent to the cluster.
type AppliedObject struct {
	// File is relative to the submission directory.
	File string `json:"file"`
	// Line is where the object starts in File.
	Line int `json:"line"`
	// Object is "Kind namespace/name".
	Object string `json:"object"`
	// Applied is set when the API server accepted the object.
	Applied bool `json:"applied"`
	// Error is the API server's answer when it did not.
	Error string `json:"error,omitempty"`
}

// CheckResult is the verdict of one check.
type CheckResult struct {
	// Name is the check's name in the exercise.
	Name string `json:"name"`
	// Points the check is worth.
	Points int `json:"points"`
	// Earned is Points when the check passed, else 0.
	Earned int `json:"earned"`
	// Status is Passed, Failed, or Skipped when grading could not be done.
	Status Status `json:"status"`
	// Hint comes from the exercise, for failed checks.
	Hint string `json:"hint"`
	// Explanation comes from the exercise.
	Explanation string `json:"explanation"`
	// Expected is what the failed operation wanted.
	Expected string `json:"expected,omitempty"`
	// Observed is what the cluster showed at its last evaluation.
	Observed string `json:"observed,omitempty"`
	// Error is the failing operation's full error.
	Error string `json:"error,omitempty"`
	// Duration is how long the check took.
	Duration time.Duration `json:"duration"`
	// Ops are the try operations that ran.
	Ops []OpResult `json:"operations"`
	// Finally are the finally operations that ran.
	Finally []OpResult `json:"finally,omitempty"`
}

// Failed lists the names of the checks that did not pass.
func (g *Grade) Failed() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Status != Passed {
			out = append(out, c.Name)
		}
	}
	return out
}

// RefusedRules lists the rule of every refusal, in order.
func (g *Grade) RefusedRules() []string {
	var out []string
	for _, r := range g.Refused {
		out = append(out, r.Rule)
	}
	return out
}

// newGrade is an empty grade of sub for ex: every check not run yet.
func newGrade(ex *Exercise, sub *Submission, learner string) *Grade {
	g := &Grade{
		Exercise: ex.Metadata.Name, Title: ex.Metadata.Title, File: ex.File(), Learner: learner,
		Max: ex.MaxScore(), PassingScore: ex.PassingScore(), Status: Graded, Started: time.Now(),
		Refused: []Refusal{}, Objects: []AppliedObject{}, Checks: []CheckResult{}, Timeline: []TimelineEvent{},
	}
	if sub != nil {
		g.Submission, g.Ignored = sub.Dir, sub.Ignored
		g.Refused = append(g.Refused, sub.Refused...)
	}
	return g
}

// fail ends a grade that could not be done: every check that has not run
// scores nothing, with why.
func (g *Grade) fail(ex *Exercise, status, format string, args ...any) {
	g.Status, g.Error = status, fmt.Sprintf(format, args...)
	order := checkOrder(ex)
	for _, i := range order[min(len(g.Checks), len(order)):] {
		ch := &ex.Spec.Checks[i]
		g.Checks = append(g.Checks, CheckResult{Name: ch.Name, Points: ch.Points, Status: Skipped, Hint: ch.Hint,
			Explanation: ch.Explanation, Error: "not run: " + g.Error})
	}
}

// errTimeLimit is the cause of the context of a grading that reached the
// exercise's time limit.
var errTimeLimit = errors.New("the exercise's time limit was reached")

// Grade boots the exercise's cluster, runs its setup, applies the
// submission's accepted objects (the refused ones never reach the
// cluster), runs every check (a failed check never stops the others) and
// tears the cluster down (unless KeepOnFailure is set and the grade did
// not pass). The exercise's time limit bounds all of it.
//
// The returned error is only for a grading interrupted through ctx; a
// grading that could not be done (cluster down, setup failed) is a Grade
// with Status GradeError.
func (r *Runner) Grade(ctx context.Context, ex *Exercise, sub *Submission, learner string) (*Grade, error) {
	g := newGrade(ex, sub, learner)
	defer func() { g.Duration = time.Since(g.Started) }()
	// What is refused is known now: say it before a cluster boots, and
	// boot none when nothing is left to apply.
	name := sessionName(ex.Metadata.Name, learner)
	for _, rf := range g.Refused {
		r.report(Progress{Lab: name, Step: "submission", Message: rf.Error()})
	}
	if sub != nil && len(sub.Objects) == 0 && len(sub.Refused) > 0 {
		g.fail(ex, GradeRefused, "%s", nothingValid(len(sub.Refused)))
		r.report(Progress{Lab: name, Step: "submission", Message: g.Error + "; no cluster booted, score 0"})
		return g, nil
	}
	limit := ex.Timeout()
	gctx, cancel := context.WithTimeoutCause(ctx, limit, errTimeLimit)
	defer cancel()
	s, err := r.Start(gctx, sessionName(ex.Metadata.Name, learner), ex.Spec.Cluster)
	if err != nil && gctx.Err() == nil {
		// A cluster that did not come up is the grader's problem, not the
		// learner's: try once more before giving up on the submission.
		r.report(Progress{Lab: sessionName(ex.Metadata.Name, learner), Message: fmt.Sprintf("cluster did not come up, retrying once: %v", err)})
		s, err = r.Start(gctx, sessionName(ex.Metadata.Name, learner), ex.Spec.Cluster)
	}
	if err != nil {
		if ctx.Err() != nil {
			g.fail(ex, GradeError, "interrupted: %v", ctx.Err())
			return g, ctx.Err()
		}
		g.fail(ex, GradeError, "%v", err)
		return g, nil
	}
	g.BootDuration = s.x.res.BootDuration
	defer func() {
		g.Timeline = s.Timeline()
		keep := r.KeepOnFailure && !g.Passed
		kc, err := s.Close(ctx, keep)
		if keep {
			g.Kubeconfig = kc
			s.x.progress("", "cluster kept: KUBECONFIG=%s", kc)
		} else if err != nil && r.Log != nil {
			r.Log.Warn("tear down", "exercise", ex.Metadata.Name, "learner", learner, "err", err)
		}
	}()
	s.useExercise(ex)
	if err := s.gradeSetup(gctx, ex, g); err != nil {
		g.fail(ex, GradeError, "%v", err)
		return g, interrupted(ctx)
	}
	if err := s.applySubmission(gctx, &ex.Spec.Submission, sub, g); err != nil {
		g.fail(ex, GradeError, "%v", err)
		return g, interrupted(ctx)
	}
	for _, i := range checkOrder(ex) {
		if ctx.Err() != nil {
			g.fail(ex, GradeError, "interrupted: %v", ctx.Err())
			return g, ctx.Err()
		}
		g.Checks = append(g.Checks, s.gradeCheck(gctx, ex, &ex.Spec.Checks[i], limit))
	}
	g.TimedOut = errors.Is(context.Cause(gctx), errTimeLimit)
	for _, c := range g.Checks {
		g.Score += c.Earned
	}
	g.Passed = g.Score >= g.PassingScore
	s.x.progress("", "score %d/%d (passing score %d)", g.Score, g.Max, g.PassingScore)
	return g, nil
}

// nothingValid is why a submission of which every part was refused
// scores 0 without a cluster.
func nothingValid(refused int) string {
	what := "the only part"
	switch {
	case refused == 2:
		what = "both parts"
	case refused > 2:
		what = fmt.Sprintf("all %d parts", refused)
	}
	return fmt.Sprintf("nothing to grade: %s of the submission broke the exercise's contract (see the refusals)", what)
}

func interrupted(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// sessionName names a grading's cluster after the exercise and learner.
func sessionName(exercise, learner string) string {
	name := exercise
	if learner != "" {
		name += "-" + learner
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-") // the cluster's name is cut to length, not this one
	if out == "" {
		out = "exercise"
	}
	return out
}

// gradeSetup runs the exercise's setup, then protects its objects
// (spec.protect); a failure is the exercise's.
func (s *Session) gradeSetup(ctx context.Context, ex *Exercise, g *Grade) error {
	if len(ex.Spec.Setup) == 0 && len(ex.Spec.Protect) == 0 {
		return nil
	}
	s.Step("setup")
	for i := range ex.Spec.Setup {
		or := s.Exec(ctx, &ex.Spec.Setup[i])
		g.Setup = append(g.Setup, or)
		if or.Status == Failed {
			err := fmt.Errorf("setup: %s (%s:%d): %s", or.Kind, ex.File(), or.Line, or.Error)
			s.EndStep(Failed, err)
			return err
		}
	}
	if err := s.protect(ctx, ex); err != nil {
		err = fmt.Errorf("setup: %w", err)
		s.EndStep(Failed, err)
		return err
	}
	s.EndStep(Passed, nil)
	return nil
}

// applyTimeout bounds applying one object of a submission.
const applyTimeout = 30 * time.Second

// applySubmission creates the contract's namespaces and applies the
// accepted objects one by one (server-side apply), recording what the API
// server said of each. Only a failure to create the namespaces is an
// error: a rejected object is the submission's problem.
func (s *Session) applySubmission(ctx context.Context, c *Contract, sub *Submission, g *Grade) error {
	s.Step("submission") // refusals were reported before the boot
	for _, ns := range c.Namespaces {
		if ns == "default" {
			continue
		}
		op := &Operation{Description: "create namespace " + ns, Timeout: durationOf(applyTimeout), Apply: &ManifestOp{objects: []Object{{
			Content: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}, File: "<grader>",
		}}}}
		if or := s.Exec(ctx, op); or.Status == Failed {
			err := fmt.Errorf("create namespace %s: %s", ns, or.Error)
			s.EndStep(Failed, err)
			return err
		}
		if err := s.waitServiceAccount(ctx, ns); err != nil {
			s.EndStep(Failed, err)
			return err
		}
	}
	if sub == nil {
		s.EndStep(Passed, nil)
		return nil
	}
	for _, o := range sub.Objects {
		op := &Operation{
			Description: fmt.Sprintf("apply %s (%s:%d)", o.Ref(), o.RelFile, o.Pos.Line), Timeout: durationOf(applyTimeout),
			Apply: &ManifestOp{Namespace: o.Namespace, objects: []Object{o.Object}},
		}
		or := s.Exec(ctx, op)
		ao := AppliedObject{File: o.RelFile, Line: o.Pos.Line, Object: o.Ref(), Applied: or.Status == Passed}
		if !ao.Applied {
			ao.Error = or.Error
		}
		g.Objects = append(g.Objects, ao)
	}
	s.EndStep(Passed, nil)
	return nil
}

// waitServiceAccount waits for the "default" ServiceAccount of a new
// namespace: pods cannot be created there before it exists.
func (s *Session) waitServiceAccount(ctx context.Context, ns string) error {
	a, err := s.x.api()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	for {
		_, err := a.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("wait for the default ServiceAccount of namespace %s: %w", ns, err)
		}
		if serr := sleep(ctx, 200*time.Millisecond); serr != nil {
			return fmt.Errorf("wait for the default ServiceAccount of namespace %s: %w", ns, errors.Join(err, serr))
		}
	}
}

// gradeCheck runs one check: its try operations until one fails, then
// its finally operations.
func (s *Session) gradeCheck(ctx context.Context, ex *Exercise, ch *Check, limit time.Duration) CheckResult {
	cr := CheckResult{Name: ch.Name, Points: ch.Points, Status: Passed, Hint: ch.Hint, Explanation: ch.Explanation, Ops: []OpResult{}}
	if ctx.Err() != nil {
		cr.Status, cr.Error = Failed, fmt.Sprintf("not run: the exercise's time limit of %s was reached", limit)
		return cr
	}
	start := time.Now()
	s.Step(ch.Name)
	tctx := ctx
	if d := ch.Timeout.Duration; d > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	for i := range ch.Try {
		op := &ch.Try[i]
		or := s.Exec(tctx, op)
		cr.Ops = append(cr.Ops, or)
		if or.Status == Failed {
			cr.Status = Failed
			cr.Error = fmt.Sprintf("%s (%s:%d): %s", or.Kind, ex.File(), or.Line, or.Error)
			if errors.Is(context.Cause(ctx), errTimeLimit) {
				cr.Error += fmt.Sprintf("\n(the exercise's time limit of %s was reached)", limit)
			}
			cr.Expected, cr.Observed = s.describeFailure(op, or)
			break
		}
	}
	for i := range ch.Finally {
		if ctx.Err() != nil {
			break // the cluster is about to go; nothing to undo for later checks
		}
		cr.Finally = append(cr.Finally, s.Exec(ctx, &ch.Finally[i]))
	}
	cr.Duration = time.Since(start)
	if cr.Status == Passed {
		cr.Earned = cr.Points
		s.EndStep(Passed, nil)
	} else {
		s.EndStep(Failed, errors.New(cr.Error))
	}
	return cr
}

// describeFailure says what a failed operation wanted and what it saw.
func (s *Session) describeFailure(op *Operation, or OpResult) (expected, observed string) {
	within := op.TimeLimit().String()
	switch {
	case op.Wait != nil:
		expected = fmt.Sprintf("`%s` to hold within %s", op.Wait.Expr, within)
	case op.Assert != nil && op.Assert.Within.Duration > 0:
		expected = fmt.Sprintf("`%s` to hold within %s", op.Assert.Expr, op.Assert.Within)
	case op.Assert != nil:
		expected = fmt.Sprintf("`%s` to hold", op.Assert.Expr)
	case op.Error != nil && op.Error.For.Duration > 0:
		expected = fmt.Sprintf("`%s` to stay false for %s", op.Error.Expr, op.Error.For)
	case op.Error != nil:
		expected = fmt.Sprintf("`%s` to be false", op.Error.Expr)
	case op.Kubectl != nil:
		expected = commandExpectation("kubectl "+strings.Join(op.Kubectl.Args, " "), op.Kubectl.ExpectError, op.Kubectl.ExpectOutput)
	case op.Script != nil:
		expected = commandExpectation(op.Script.Command, op.Script.ExpectError, op.Script.ExpectOutput)
	default:
		expected = op.Summary() + " to succeed"
	}
	if op.Description != "" && !strings.HasPrefix(expected, op.Description) {
		expected = op.Description + ": " + expected
	}
	switch {
	case len(or.Observed) > 0:
		observed = strings.TrimRight(assertions.String(or.Observed), "\n")
	case (op.Wait != nil || op.Assert != nil) && strings.HasSuffix(or.Error, context.DeadlineExceeded.Error()):
		observed = op.Compiled().Source + " = false at every evaluation" + s.explainArgs(op.Compiled().Source)
	case op.Wait != nil || op.Assert != nil:
		observed = op.Compiled().Source + " = false" + s.explainArgs(op.Compiled().Source)
	case op.Error != nil && strings.Contains(or.Error, "it held"):
		observed = op.Error.Expr + " = true" + s.explainArgs(op.Error.Expr)
	case op.Kubectl != nil || op.Script != nil:
		what := ""
		if op.Kubectl != nil {
			what = "kubectl " + strings.Join(op.Kubectl.Args, " ")
		} else {
			what = op.Script.Command
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(or.Error, what), ";")
		first = strings.TrimPrefix(first, ": ")
		if strings.HasPrefix(first, " succeeded") {
			first = "it succeeded"
		}
		out := strings.TrimSpace(or.Output)
		if out == "" {
			out = "(none)"
		}
		observed = first + "; output: " + out
	default:
		observed = or.Error
	}
	return expected, observed
}

func commandExpectation(cmd string, expectError bool, expectOutput string) string {
	verb := "to succeed"
	if expectError {
		verb = "to fail"
	}
	s := fmt.Sprintf("`%s` %s", cmd, verb)
	if expectOutput != "" {
		s += fmt.Sprintf(" with output matching /%s/", expectOutput)
	}
	return s
}

// Learner is one submission of a batch: a name and a directory.
type Learner struct {
	// Name is the learner's name in reports (the directory's name).
	Name string
	// Dir is the submission directory.
	Dir string
}

// Learners lists the sub-directories of dir (hidden ones skipped), one
// per learner, sorted by name.
func Learners(dir string) ([]Learner, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list submissions: %w", err)
	}
	var out []Learner
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, Learner{Name: e.Name(), Dir: filepath.Join(dir, e.Name())})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("list submissions in %s: %w", dir, errNoSubmission)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GradeAll grades every learner's submission, parallel at a time (at
// least 1), each on its own cluster. Grades come back in the learners'
// order. A submission directory that cannot be read is a Grade with
// Status GradeError; the error is only for an interrupted batch.
func (r *Runner) GradeAll(ctx context.Context, ex *Exercise, learners []Learner, parallel int) ([]*Grade, error) {
	parallel = max(parallel, 1)
	out := make([]*Grade, len(learners))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, l := range learners {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			g := newGrade(ex, nil, l.Name)
			g.Submission = l.Dir
			g.fail(ex, GradeError, "interrupted: %v", ctx.Err())
			out[i] = g
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sub, err := ReadSubmission(l.Dir, &ex.Spec.Submission)
			if err != nil {
				g := newGrade(ex, nil, l.Name)
				g.Submission = l.Dir
				g.fail(ex, GradeError, "%v", err)
				out[i] = g
				return
			}
			out[i], _ = r.Grade(ctx, ex, sub, l.Name)
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

func durationOf(d time.Duration) cluster.Duration { return cluster.Duration{Duration: d} }

// explainArgs shows the collection a failed all/any/none/one/filter/count
// expression ranged over (the lab engine's Explain only shows the
// operands of comparisons), e.g. the pods and their states.
func (s *Session) explainArgs(src string) string {
	tree, err := parser.Parse(src)
	if err != nil {
		return ""
	}
	b, ok := tree.Node.(*ast.BuiltinNode)
	if !ok || len(b.Arguments) == 0 {
		return ""
	}
	arg := b.Arguments[0].String()
	v, err := s.Eval(arg)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("\n%s = %s", arg, assertions.Format(v))
}

// report sends progress that belongs to no session.
func (r *Runner) report(p Progress) {
	if r.Progress != nil {
		r.Progress(p)
	}
}
