package class

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
)

// Work is the inside of grading pod number index: it unpacks the
// exercise and submission index from in (the pod's ConfigMap volume)
// under work and grades the submission with r, as `kubelab grade
// --submission` does on a machine.
func Work(ctx context.Context, r *engine.Runner, in, work string, index int) (*grade.Grade, error) {
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(in, name))
		if err != nil {
			return nil, fmt.Errorf("grading pod input: %w", err)
		}
		return b, nil
	}
	file, err := read("exercise.file")
	if err != nil {
		return nil, err
	}
	exArchive, err := read("exercise.tgz")
	if err != nil {
		return nil, err
	}
	sub := "submissions/" + strconv.Itoa(index)
	subArchive, err := read(sub + ".tgz")
	if err != nil {
		return nil, err
	}
	learner, err := read(sub + ".learner")
	if err != nil {
		return nil, err
	}
	exDir, subDir := filepath.Join(work, "exercise"), filepath.Join(work, "submission")
	if err := Unpack(exArchive, exDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(subDir, 0o755); err != nil {
		return nil, err
	}
	if err := Unpack(subArchive, subDir); err != nil {
		return nil, err
	}
	ex, err := grade.LoadExercise(filepath.Join(exDir, strings.TrimSpace(string(file))))
	if err != nil {
		return nil, err
	}
	s, err := grade.ReadSubmission(subDir, &ex.Spec.Submission)
	if err != nil {
		return grade.NotGraded(ex, string(learner), subDir, "%v", err), nil
	}
	return grade.Run(ctx, r, ex, s, string(learner))
}
