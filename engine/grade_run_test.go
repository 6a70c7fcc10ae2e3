package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
)

// TestGradeTimeLimit grades on a real cluster an exercise whose time
// limit runs out in the middle of a check: that check fails, the next is
// not run, both score nothing, and the checks done before keep their
// points.
func TestGradeTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a cluster; skipped with -short")
	}
	ex, err := engine.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: slow, title: Slow}
spec:
  statement: Nothing to do.
  timeout: 30s
  submission: {kinds: [ConfigMap]}
  checks:
  - name: quick
    points: 1
    hint: h
    explanation: e
    try:
    - assert: {expr: 'len(nodes()) == 1'}
  - name: never
    points: 2
    hint: h
    explanation: e
    try:
    - wait: {expr: 'len(nodes()) == 2', timeout: 5m}
  - name: too late
    points: 3
    hint: h
    explanation: e
    try:
    - assert: {expr: 'true'}
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g, err := enginetest.Runner(t).Grade(context.WithoutCancel(t.Context()), ex, &engine.Submission{Dir: "none"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 90*time.Second {
		t.Errorf("grading took %s despite a 30s time limit", took)
	}
	if g.Status != engine.Graded || !g.TimedOut || g.Score != 1 || g.Passed {
		t.Fatalf("status %s, timed out %v, score %d/%d, passed %v; want graded, timed out, 1/6, not passed", g.Status, g.TimedOut, g.Score, g.Max, g.Passed)
	}
	if c := g.Checks[1]; c.Status != engine.Failed || !strings.Contains(c.Error, "time limit of 30s was reached") || c.Observed == "" {
		t.Errorf("the check cut short: %+v", c)
	}
	if c := g.Checks[2]; c.Status != engine.Failed || c.Error != "not run: the exercise's time limit of 30s was reached" || len(c.Ops) != 0 {
		t.Errorf("the check after the limit: %+v", c)
	}
}
