package grade

import (
	"fmt"
	"time"

	"kubelab.dev/kubelab/engine"
)

// Grade statuses: a submission was graded; nothing of it respected the
// contract, so no cluster was booted and it scores 0 (the learner's
// problem); or grading could not be done (the cluster did not come up, the
// exercise's setup failed, grading was interrupted: the grader's problem).
const (
	StatusGraded  = "graded"
	StatusRefused = "refused"
	StatusError   = "error"
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
	// Status is StatusGraded, StatusRefused or StatusError.
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
	// is StatusError).
	Passed bool `json:"passed"`
	// TimedOut is set when the exercise's time limit ended grading; the
	// checks that had not run scored nothing.
	TimedOut bool `json:"timedOut,omitempty"`
	// Started is when grading started.
	Started time.Time `json:"started"`
	// Duration is how long grading took, boot and teardown included.
	Duration time.Duration `json:"duration,format:sec"`
	// BootDuration is how long the cluster took to come up.
	BootDuration time.Duration `json:"bootDuration,format:sec"`
	// Refused lists what the submission had that was not applied.
	Refused []Refusal `json:"refused"`
	// Objects lists the submission's objects that were sent to the
	// cluster and whether the API server accepted them.
	Objects []AppliedObject `json:"objects"`
	// Ignored lists files of the submission that are not manifests.
	Ignored []string `json:"ignored,omitempty"`
	// Setup is the exercise's setup operations.
	Setup []engine.OpResult `json:"setup,omitempty"`
	// Checks is every check, in order.
	Checks []CheckResult `json:"checks"`
	// Timeline is what happened on the cluster during grading.
	Timeline []engine.TimelineEvent `json:"timeline"`
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
	Status engine.Status `json:"status"`
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
	Duration time.Duration `json:"duration,format:sec"`
	// Ops are the try operations that ran.
	Ops []engine.OpResult `json:"operations"`
	// Finally are the finally operations that ran.
	Finally []engine.OpResult `json:"finally,omitempty"`
}

// Failed lists the names of the checks that did not pass.
func (g *Grade) Failed() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Status != engine.Passed {
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
		Max: ex.MaxScore(), PassingScore: ex.PassingScore(), Status: StatusGraded, Started: time.Now(),
		Refused: []Refusal{}, Objects: []AppliedObject{}, Checks: []CheckResult{}, Timeline: []engine.TimelineEvent{},
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
		g.Checks = append(g.Checks, CheckResult{Name: ch.Name, Points: ch.Points, Status: engine.Skipped, Hint: ch.Hint,
			Explanation: ch.Explanation, Error: "not run: " + g.Error})
	}
}
