package engine

import (
	"fmt"
	"strings"
)

// GradeScore is the score line of a graded submission in a lab report.
type GradeScore struct {
	// Score is the points earned; Max the points of every check.
	Score int `json:"score"`
	Max   int `json:"max"`
	// PassingScore is the score needed to pass.
	PassingScore int `json:"passingScore"`
	// Passed says whether Score reached PassingScore.
	Passed bool `json:"passed"`
	// NotApplied lists the submission's objects that never reached the
	// cluster: refused by the contract or rejected by the API server.
	NotApplied []string `json:"notApplied,omitempty"`
}

// Result is the grade as a lab result, so that the lab reports (the JSON
// report and the HTML page drawn from it) show it: one step per check,
// named with the points it earned out of its points, whose error says how
// many points were lost and why (expected and observed values, or the
// error, and the hint); the setup operations as hooks; the timeline and
// the recovery figures derived from it; and the score.
func (g *Grade) Result() *Result {
	res := &Result{
		Lab: g.Exercise, Title: g.Title, File: g.Submission, Status: Failed, Error: g.Error,
		Started: g.Started, Duration: g.Duration, BootDuration: g.BootDuration,
		Timeline: g.Timeline, Recovery: Recoveries(g.Timeline), Kubeconfig: g.Kubeconfig,
		Score: &GradeScore{Score: g.Score, Max: g.Max, PassingScore: g.PassingScore, Passed: g.Passed},
	}
	if g.Learner != "" {
		res.Lab += "/" + g.Learner
		res.Title += " — " + g.Learner
	}
	switch {
	case g.Status == GradeError:
		res.Status = Errored
	case g.Status == GradeRefused:
		res.Status = Status(GradeRefused)
	case g.Passed:
		res.Status = Passed
	}
	for _, r := range g.Refused {
		res.Score.NotApplied = append(res.Score.NotApplied, r.Error())
	}
	for _, o := range g.Objects {
		if !o.Applied {
			res.Score.NotApplied = append(res.Score.NotApplied,
				fmt.Sprintf("%s:%d: %s: rejected by the API server: %s", o.File, o.Line, o.Object, o.Error))
		}
	}
	for _, op := range g.Setup {
		op.Summary = "setup: " + op.Summary
		res.Hooks = append(res.Hooks, op)
	}
	for _, c := range g.Checks {
		res.Steps = append(res.Steps, c.step())
	}
	return res
}

// step is a check as a lab step: its try operations, then its finally
// operations.
func (c CheckResult) step() StepResult {
	s := StepResult{Name: fmt.Sprintf("%s (%d/%d points)", c.Name, c.Earned, c.Points), Status: c.Status,
		Duration: c.Duration, Ops: append([]OpResult(nil), c.Ops...)}
	for _, op := range c.Finally {
		op.Summary = "finally: " + op.Summary
		s.Ops = append(s.Ops, op)
	}
	if c.Status != Passed {
		s.Error = fmt.Sprintf("lost %d of %d points%s", c.Points-c.Earned, c.Points, c.reason())
	}
	return s
}

// reason says why a check did not pass: what it expected and observed,
// or its error; then the hint.
func (c CheckResult) reason() string {
	var b strings.Builder
	switch {
	case c.Expected != "":
		fmt.Fprintf(&b, "\nexpected: %s\nobserved: %s", c.Expected, strings.TrimSpace(c.Observed))
	case c.Error != "":
		fmt.Fprintf(&b, "\n%s", c.Error)
	}
	if c.Hint != "" && c.Error != SkippedDestructive {
		fmt.Fprintf(&b, "\nhint: %s", strings.Join(strings.Fields(c.Hint), " "))
	}
	return b.String()
}
