package grade

import (
	"path/filepath"
	"time"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/engine/ops"
	"kubelab.dev/kubelab/load"
)

// ExerciseFile is the name of the exercise file inside an exercise
// directory.
const ExerciseFile = "exercise.yaml"

// DefaultExerciseTimeout is the time limit for grading one submission
// (boot, setup, apply and checks) when spec.timeout is not set.
const DefaultExerciseTimeout = 10 * time.Minute

// DefaultMaxObjects bounds the objects of a submission when
// spec.submission.maxObjects is not set.
const DefaultMaxObjects = 20

// maxMaxObjects is the largest spec.submission.maxObjects allowed.
const maxMaxObjects = 200

// Exercise is a loaded and checked exercise file (LoadExercise): its
// content, with the defaults filled in, and what the loader found out about
// it.
type Exercise struct {
	v1alpha1.Exercise
	load.Source

	checks []ops.Pos
}

// Dir is the exercise's directory: samples and manifest files are
// relative to it.
func (e *Exercise) Dir() string { return filepath.Dir(e.File()) }

// Timeout is the time limit for grading one submission.
func (e *Exercise) Timeout() time.Duration {
	if d := e.Spec.Timeout.Duration; d > 0 {
		return d
	}
	return DefaultExerciseTimeout
}

// MaxScore is the sum of the points of every check.
func (e *Exercise) MaxScore() int {
	n := 0
	for _, c := range e.Spec.Checks {
		n += c.Points
	}
	return n
}

// PassingScore is the score a submission needs to pass: spec.passingScore,
// or every point when it is not set.
func (e *Exercise) PassingScore() int {
	if e.Spec.PassingScore > 0 {
		return e.Spec.PassingScore
	}
	return e.MaxScore()
}

// CheckPos is where the i-th check starts in the exercise file.
func (e *Exercise) CheckPos(i int) ops.Pos { return e.checks[i] }
