package grade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kubelab.dev/kubelab/engine"
)

// Solve applies the reference solution of ex to the live cluster of es:
// the solution directory's objects, when the exercise has one, then the
// solution's operations. It returns what was applied; the error names
// everything that failed.
func Solve(ctx context.Context, es *engine.Session, ex *Exercise) (*Grade, error) {
	g := newGrade(ex, nil, "")
	s := session{es}
	s.Declare(ex.Bindings())
	var errs []error
	dir := filepath.Join(ex.Dir(), "solution")
	if _, err := os.Stat(dir); err == nil {
		sub, err := ReadSubmission(dir, &ex.Spec.Submission)
		if err != nil {
			return g, fmt.Errorf("exercise %s: reference solution: %w", ex.Metadata.Name, err)
		}
		ag, err := ApplySubmission(ctx, es, ex, sub)
		if err != nil {
			return g, err
		}
		g.Objects = ag.Objects
		for _, o := range ag.Objects {
			if !o.Applied {
				errs = append(errs, fmt.Errorf("apply %s (%s:%d): %s", o.Object, o.File, o.Line, o.Error))
			}
		}
	} else if len(ex.Spec.Solution) == 0 {
		return g, fmt.Errorf("exercise %s has no reference solution (no solution directory, no spec.solution)", ex.Metadata.Name)
	}
	if len(ex.Spec.Solution) > 0 {
		s.Step("solution")
		for i := range ex.Spec.Solution {
			or := s.Exec(ctx, &ex.Spec.Solution[i])
			g.Setup = append(g.Setup, or)
			if or.Status == engine.Failed {
				errs = append(errs, fmt.Errorf("solution: %s (%s:%d): %s", or.Kind, ex.File(), or.Line, or.Error))
				break
			}
		}
		s.EndStep(statusOf(errs), errors.Join(errs...))
	}
	return g, errors.Join(errs...)
}

func statusOf(errs []error) engine.Status {
	if len(errs) > 0 {
		return engine.Failed
	}
	return engine.Passed
}
