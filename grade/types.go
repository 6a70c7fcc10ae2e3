package grade

import (
	"fmt"
	"path/filepath"
	"time"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ops"
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
//
// Its content is a v1alpha1.Exercise converted to the types that run
// (load.Convert): operations are ops.Operation, the topology a
// cluster.Topology; the parts nothing runs keep their wire types.
type Exercise struct {
	APIVersion  string                    `yaml:"apiVersion"`
	Kind        string                    `yaml:"kind"`
	Metadata    v1alpha1.ExerciseMetadata `yaml:"metadata"`
	Spec        ExerciseSpec              `yaml:"spec"`
	load.Source `yaml:"-"`

	checks []ops.Pos
}

// ExerciseSpec is v1alpha1.ExerciseSpec as it runs; see there for its
// fields.
type ExerciseSpec struct {
	Statement    string               `yaml:"statement"`
	Notes        string               `yaml:"notes,omitempty"`
	Timeout      cluster.Duration     `yaml:"timeout,omitempty"`
	Cluster      cluster.Topology     `yaml:"cluster,omitempty"`
	Setup        []ops.Operation      `yaml:"setup,omitempty"`
	Solution     []ops.Operation      `yaml:"solution,omitempty"`
	Submission   v1alpha1.Contract    `yaml:"submission"`
	Checks       []Check              `yaml:"checks"`
	PassingScore int                  `yaml:"passingScore,omitempty"`
	Samples      []v1alpha1.Sample    `yaml:"samples,omitempty"`
	SetupScore   *v1alpha1.SetupScore `yaml:"setupScore,omitempty"`
	Protect      []v1alpha1.Protected `yaml:"protect,omitempty"`
	Mistakes     []Mistake            `yaml:"mistakes,omitempty"`
}

// Mistake is v1alpha1.Mistake as it runs; see there for its fields.
type Mistake struct {
	Name        string          `yaml:"name"`
	Description string          `yaml:"description,omitempty"`
	Do          []ops.Operation `yaml:"do"`
	Score       int             `yaml:"score"`
	Fails       []string        `yaml:"fails,omitempty"`
}

// Mistake is the documented mistake called name, or nil.
func (e *Exercise) Mistake(name string) *Mistake {
	for i := range e.Spec.Mistakes {
		if e.Spec.Mistakes[i].Name == name {
			return &e.Spec.Mistakes[i]
		}
	}
	return nil
}

// Check is v1alpha1.Check as it runs; see there for its fields.
type Check struct {
	Name        string           `yaml:"name"`
	Points      int              `yaml:"points"`
	Hint        string           `yaml:"hint"`
	Explanation string           `yaml:"explanation"`
	Timeout     cluster.Duration `yaml:"timeout,omitempty"`
	Try         []ops.Operation  `yaml:"try"`
	Destructive *bool            `yaml:"destructive,omitempty"`
	Finally     []ops.Operation  `yaml:"finally,omitempty"`
	Needs       []string         `yaml:"needs,omitempty"`
}

// IsDestructive reports whether the check says it changes the cluster.
func (c *Check) IsDestructive() bool { return c.Destructive != nil && *c.Destructive }

// Dir is the exercise's directory: samples and manifest files are
// relative to it.
func (e *Exercise) Dir() string { return filepath.Dir(e.File()) }

// Topology is the cluster the exercise runs on. Its namespace is the
// first the submission contract allows ("default" unless it says
// otherwise): the one the statement names, where the exercise's objects
// and expressions are, on a cluster kubelab shares too (--backend
// kubeconfig).
func (e *Exercise) Topology() cluster.Topology {
	t := e.Spec.Cluster
	if t.Namespace == "" {
		t.Namespace = "default"
		if ns := e.Spec.Submission.Namespaces; len(ns) > 0 {
			t.Namespace = ns[0]
		}
	}
	return t
}

// Needs is what the exercise needs of its backend beyond the Kubernetes
// API, inferred from its setup, solution and checks as for a lab:
// capability -> the first thing that needs it, with its line.
func (e *Exercise) Needs() map[cluster.Capability]string {
	return load.NeedsOf(e.File(), exerciseOps(e))
}

// CheckBackend refuses an exercise its backend cannot run, before
// anything runs: the error (a *cluster.MissingError) names each missing
// capability and what in the exercise needs it.
func (e *Exercise) CheckBackend(b cluster.Backend) error {
	if err := cluster.CheckCapabilities(b, e.Needs()); err != nil {
		return fmt.Errorf("exercise %s: %w", e.Metadata.Name, err)
	}
	return nil
}

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
