package grade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/ops"
)

// session is an engine session grading an exercise: setup, submission
// and checks run on it as operations.
type session struct {
	*engine.Session
}

// gradeSetup runs the exercise's setup, then protects its objects
// (spec.protect); a failure is the exercise's.
func (s session) gradeSetup(ctx context.Context, ex *Exercise, g *Grade) error {
	if len(ex.Spec.Setup) == 0 && len(ex.Spec.Protect) == 0 {
		return nil
	}
	s.Step("setup")
	var err error
	if g.Setup, err = s.execAll(ctx, "setup", ex.Spec.Setup, ex.File()); err != nil {
		s.EndStep(engine.Failed, err)
		return err
	}
	if err := s.protect(ctx, ex); err != nil {
		err = fmt.Errorf("setup: %w", err)
		s.EndStep(engine.Failed, err)
		return err
	}
	s.EndStep(engine.Passed, nil)
	return nil
}

// execAll runs the operations of part (setup, solution) of the exercise
// file in order, up to the first that fails, whose error it returns.
func (s session) execAll(ctx context.Context, part string, all []ops.Operation, file string) ([]engine.OpResult, error) {
	var out []engine.OpResult
	for i := range all {
		or := s.Exec(ctx, &all[i])
		out = append(out, or)
		if or.Status == engine.Failed {
			return out, fmt.Errorf("%s: %s (%s:%d): %s", part, or.Kind, file, or.Line, or.Error)
		}
	}
	return out, nil
}

// applyTimeout bounds applying one object of a submission.
const applyTimeout = 30 * time.Second

// applySubmission creates the contract's namespaces and applies the
// accepted objects one by one (server-side apply), recording what the API
// server said of each. Only a failure to create the namespaces is an
// error: a rejected object is the submission's problem.
func (s session) applySubmission(ctx context.Context, c *v1alpha1.Contract, sub *Submission, g *Grade) error {
	step := "submission" // refusals were reported before the boot
	if sub == nil {
		// A live exercise: no submission, only the namespaces the learner
		// works in.
		if !slices.ContainsFunc(c.Namespaces, func(ns string) bool { return ns != "default" }) {
			return nil
		}
		step = "namespaces"
	}
	s.Step(step)
	for _, ns := range c.Namespaces {
		if ns == "default" {
			continue
		}
		op := &ops.Operation{Description: "create namespace " + ns, Timeout: durationOf(applyTimeout), Apply: ops.NewManifestOp("", ops.Object{
			Content: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}, File: "<grader>",
		})}
		if or := s.Exec(ctx, op); or.Status == engine.Failed {
			err := fmt.Errorf("create namespace %s: %s", ns, or.Error)
			s.EndStep(engine.Failed, err)
			return err
		}
		if err := s.waitServiceAccount(ctx, ns); err != nil {
			s.EndStep(engine.Failed, err)
			return err
		}
	}
	if sub == nil {
		s.EndStep(engine.Passed, nil)
		return nil
	}
	for _, o := range sub.Objects {
		op := &ops.Operation{
			Description: fmt.Sprintf("apply %s (%s:%d)", o.Ref(), o.RelFile, o.Pos.Line), Timeout: durationOf(applyTimeout),
			Apply: ops.NewManifestOp(o.Namespace, o.Object),
		}
		or := s.Exec(ctx, op)
		ao := AppliedObject{File: o.RelFile, Line: o.Pos.Line, Object: o.Ref(), Applied: or.Status == engine.Passed}
		if !ao.Applied {
			ao.Error = or.Error
		}
		g.Objects = append(g.Objects, ao)
	}
	s.EndStep(engine.Passed, nil)
	return nil
}

// waitServiceAccount waits for the "default" ServiceAccount of a new
// namespace: pods cannot be created there before it exists.
func (s session) waitServiceAccount(ctx context.Context, ns string) error {
	cs, err := s.Cluster().Client()
	if err != nil {
		return fmt.Errorf("wait for the default ServiceAccount of namespace %s: %w", ns, err)
	}
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("wait for the default ServiceAccount of namespace %s: %w", ns, err)
		}
		if serr := ops.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return fmt.Errorf("wait for the default ServiceAccount of namespace %s: %w", ns, errors.Join(err, serr))
		}
	}
}

// gradeCheck runs one check: its try operations until one fails, then
// its finally operations. A check that needs one of the checks before it
// that did not pass is not run and scores nothing.
func (s session) gradeCheck(ctx context.Context, ex *Exercise, ch *Check, limit time.Duration, before []CheckResult) CheckResult {
	cr := CheckResult{Name: ch.Name, Points: ch.Points, Status: engine.Passed, Hint: ch.Hint, Explanation: ch.Explanation, Ops: []engine.OpResult{}}
	if n, ok := unmetNeed(ch, before); ok {
		cr.Status, cr.Error = engine.Failed, fmt.Sprintf("not run: it needs %q, which did not pass", n)
		return cr
	}
	if ctx.Err() != nil {
		cr.Status, cr.Error = engine.Failed, fmt.Sprintf("not run: the exercise's time limit of %s was reached", limit)
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
		if or.Status == engine.Failed {
			cr.Status = engine.Failed
			cr.Error = fmt.Sprintf("%s (%s:%d): %s", or.Kind, ex.File(), or.Line, or.Error)
			if errors.Is(context.Cause(ctx), errTimeLimit) {
				cr.Error += fmt.Sprintf("\n(the exercise's time limit of %s was reached)", limit)
			}
			cr.Expected, cr.Observed = s.describeFailure(op, or)
			break
		}
	}
	// finally undoes what try did (an uncordon, a nodeUp) also when try
	// ran out of time: with a context of its own, each operation within
	// its own timeout. If it fails the cluster is no longer what it was,
	// which the check's verdict says.
	fctx := context.WithoutCancel(ctx)
	for i := range ch.Finally {
		or := s.Exec(fctx, &ch.Finally[i])
		cr.Finally = append(cr.Finally, or)
		if or.Status == engine.Failed {
			if cr.Status == engine.Passed {
				cr.Expected, cr.Observed = s.describeFailure(&ch.Finally[i], or)
			}
			cr.Status = engine.Failed
			cr.Error = strings.TrimPrefix(cr.Error+"\n", "\n") + fmt.Sprintf("finally: %s (%s:%d) failed, so the cluster is no longer as it was before this check: %s",
				or.Kind, ex.File(), or.Line, or.Error)
		}
	}
	cr.Duration = time.Since(start)
	if cr.Status == engine.Passed {
		cr.Earned = cr.Points
		s.EndStep(engine.Passed, nil)
	} else {
		s.EndStep(engine.Failed, errors.New(cr.Error))
	}
	return cr
}

// describeFailure says what a failed operation wanted and what it saw:
// the values the engine observed when it has them, else the operation's
// own wording.
func (s session) describeFailure(op *ops.Operation, or engine.OpResult) (expected, observed string) {
	expected, observed = op.Describe(or.Error, or.Output, s.explainArgs)
	if len(or.Observed) > 0 {
		observed = strings.TrimRight(assertions.String(or.Observed), "\n")
	}
	return expected, observed
}

// explainArgs shows the collection a failed all/any/none/one/filter/count
// expression ranged over (the lab engine's Explain only shows the
// operands of comparisons), e.g. the pods and their states.
func (s session) explainArgs(src string) string {
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

// unmetNeed is the first check ch needs whose result in before did not
// pass (a check needs only checks that run before it: see the loader).
func unmetNeed(ch *Check, before []CheckResult) (string, bool) {
	for _, n := range ch.Needs {
		for _, r := range before {
			if r.Name == n && r.Status != engine.Passed {
				return n, true
			}
		}
	}
	return "", false
}
