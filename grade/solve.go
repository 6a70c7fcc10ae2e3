package grade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/ops"
)

// Solved is what Solve did: the solution directory's objects sent to the
// cluster, and the solution's operations that ran.
type Solved struct {
	Objects []AppliedObject
	Ops     []engine.OpResult
}

// Solve applies the reference solution of ex to the live cluster of es:
// the solution directory's objects, when the exercise has one, then the
// solution's operations. The error names everything that failed.
func Solve(ctx context.Context, es *engine.Session, ex *Exercise) (*Solved, error) {
	out := &Solved{}
	dir := filepath.Join(ex.Dir(), "solution")
	_, err := os.Stat(dir)
	hasDir := err == nil
	if !hasDir && len(ex.Spec.Solution) == 0 {
		return out, fmt.Errorf("exercise %s has no reference solution (no solution directory, no spec.solution)", ex.Metadata.Name)
	}
	var errs []error
	if hasDir {
		sub, err := ReadSubmission(dir, &ex.Spec.Submission)
		if err != nil {
			return out, fmt.Errorf("exercise %s: reference solution: %w", ex.Metadata.Name, err)
		}
		ag, err := ApplySubmission(ctx, es, ex, sub)
		if err != nil {
			return out, err
		}
		out.Objects = ag.Objects
		for _, o := range ag.Objects {
			if !o.Applied {
				errs = append(errs, fmt.Errorf("apply %s (%s:%d): %s", o.Object, o.File, o.Line, o.Error))
			}
		}
	}
	if len(ex.Spec.Solution) > 0 {
		if out.Ops, err = runStep(ctx, es, ex, "solution", ex.Spec.Solution); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// runStep runs operations of ex as one step of the session's timeline,
// called part, with the exercise's bindings known.
func runStep(ctx context.Context, es *engine.Session, ex *Exercise, part string, list []ops.Operation) ([]engine.OpResult, error) {
	s := session{es}
	s.Declare(ex.Bindings())
	s.Step(part)
	res, err := s.execAll(ctx, part, list, ex.File())
	if err != nil {
		s.EndStep(engine.Failed, err)
		return res, err
	}
	s.EndStep(engine.Passed, nil)
	return res, nil
}

// MakeMistake makes the documented mistake m of ex on the live cluster of
// es, as a learner would have: its operations, in order. Grading the
// cluster after it gives m's score.
func MakeMistake(ctx context.Context, es *engine.Session, ex *Exercise, m *Mistake) ([]engine.OpResult, error) {
	res, err := runStep(ctx, es, ex, "mistake "+m.Name, m.Do)
	if err != nil {
		return res, fmt.Errorf("exercise %s: %w", ex.Metadata.Name, err)
	}
	return res, nil
}
