package grade

import (
	"fmt"
	"strings"

	"kubelab.dev/kubelab/engine"
)

// Result is the grade as a lab result, so that the lab reports (the JSON
// report and the HTML page drawn from it) show it: one step per check,
// named with the points it earned out of its points, whose error says how
// many points were lost and why (expected and observed values, or the
// error, and the hint); the setup operations as hooks; the timeline and
// the recovery figures derived from it; and the score.
func (g *Grade) Result() *engine.Result {
	res := &engine.Result{
		Lab: g.Exercise, Title: g.Title, File: g.Submission, Status: engine.Failed, Error: g.Error,
		Started: g.Started, Duration: g.Duration, BootDuration: g.BootDuration,
		Timeline: g.Timeline, Recovery: engine.Recoveries(g.Timeline), Kubeconfig: g.Kubeconfig,
		Score: &engine.GradeScore{Score: g.Score, Max: g.Max, PassingScore: g.PassingScore, Passed: g.Passed},
	}
	if g.Learner != "" {
		res.Lab += "/" + g.Learner
		res.Title += " — " + g.Learner
	}
	switch {
	case g.Status == StatusError:
		res.Status = engine.Errored
	case g.Status == StatusRefused:
		res.Status = engine.Status(StatusRefused)
	case g.Passed:
		res.Status = engine.Passed
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
func (c CheckResult) step() engine.StepResult {
	s := engine.StepResult{Name: fmt.Sprintf("%s (%d/%d points)", c.Name, c.Earned, c.Points), Status: c.Status,
		Duration: c.Duration, Ops: append([]engine.OpResult(nil), c.Ops...)}
	for _, op := range c.Finally {
		op.Summary = "finally: " + op.Summary
		s.Ops = append(s.Ops, op)
	}
	if c.Status != engine.Passed {
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
