package grade_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
)

// TestGradeTimeLimit grades, on a fake cluster, an exercise whose time
// limit runs out in the middle of a check: that check fails, the next is
// not run, both score nothing, and the checks done before keep their
// points.
func TestGradeTimeLimit(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: slow, title: Slow}
spec:
  statement: Nothing to do.
  timeout: 2s
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
	r, fc := enginetest.Fake(t, oneReadyNode)
	g, err := grade.Run(context.WithoutCancel(t.Context()), r, ex, &grade.Submission{Dir: "none"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != grade.StatusGraded || !g.TimedOut || g.Score != 1 || g.Passed {
		t.Fatalf("status %s, timed out %v, score %d/%d, passed %v; want graded, timed out, 1/6, not passed", g.Status, g.TimedOut, g.Score, g.Max, g.Passed)
	}
	if c := g.Checks[1]; c.Status != engine.Failed || !strings.Contains(c.Error, "time limit of 2s was reached") || strings.TrimSpace(c.Observed) != "len(nodes()) = 1" {
		t.Errorf("the check cut short: %+v", c)
	}
	if c := g.Checks[2]; c.Status != engine.Failed || c.Error != "not run: the exercise's time limit of 2s was reached" || len(c.Ops) != 0 {
		t.Errorf("the check after the limit: %+v", c)
	}
	if b := fc.Backends(); len(b) != 1 || !b[0].Removed() {
		t.Errorf("clusters %v: want one, removed after grading", b)
	}
}

// oneReadyNode is a cluster with one Ready worker and nothing else.
var oneReadyNode = assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}}

// TestGradeScoresAndReasonsOnAFake grades a submission on a fake cluster:
// a check that holds earns its points, one that does not loses them with
// what was expected and what was observed, and an object the API refused
// is reported with the API's answer; nothing boots.
func TestGradeScoresAndReasonsOnAFake(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: web, title: Web}
spec:
  statement: Run two web pods.
  passingScore: 3
  submission: {kinds: [ConfigMap]}
  checks:
  - name: node ready
    points: 1
    hint: look at the nodes
    explanation: one node
    try:
    - assert: {expr: 'len(nodes()) == 1 && nodes()[0].ready'}
  - name: two web pods
    points: 2
    hint: scale the Deployment
    explanation: two replicas
    try:
    - wait: {expr: 'len(pods("app=web")) == 2', timeout: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	sub := configMapSubmission(t, ex)
	state := oneReadyNode
	state.Pods = []assertions.Pod{{Name: "web-1", Labels: map[string]string{"app": "web"}, Phase: "Running"}}
	r, _ := enginetest.Fake(t, state)
	g, err := grade.Run(t.Context(), r, ex, sub, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != grade.StatusGraded || g.Score != 1 || g.Max != 3 || g.Passed {
		t.Fatalf("status %s, score %d/%d, passed %v; want graded, 1/3, not passed", g.Status, g.Score, g.Max, g.Passed)
	}
	if c := g.Checks[0]; c.Status != engine.Passed || c.Earned != 1 {
		t.Errorf("the check that holds: %+v", c)
	}
	c := g.Checks[1]
	if c.Status != engine.Failed || c.Earned != 0 || c.Expected != "`len(pods(\"app=web\")) == 2` to hold within 1s" || strings.TrimSpace(c.Observed) != `len(pods("app=web")) = 1` || c.Hint != "scale the Deployment" {
		t.Errorf("the check that fails: status %s, earned %d, expected %q, observed %q, hint %q", c.Status, c.Earned, c.Expected, c.Observed, c.Hint)
	}
	if len(g.Objects) != 1 || g.Objects[0].Applied || g.Objects[0].Object != "ConfigMap default/c" || !strings.Contains(g.Objects[0].Error, "kubeconfig") {
		t.Errorf("objects %+v: want the ConfigMap not applied, with the reason", g.Objects)
	}
	if failed := g.Failed(); len(failed) != 1 || !strings.Contains(failed[0], "two web pods") {
		t.Errorf("Failed() = %q, want the one failed check named", failed)
	}
}

// TestGradeSkipsACheckWhoseNeedFailed: a check that needs a failed one
// is not run (no wait for pods that will not come) and says which.
func TestGradeSkipsACheckWhoseNeedFailed(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: web, title: Web}
spec:
  statement: Run two web pods.
  submission: {kinds: [ConfigMap]}
  checks:
  - name: two web pods
    points: 2
    hint: scale the Deployment
    explanation: two replicas
    try:
    - assert: {expr: 'len(pods("app=web")) == 2'}
  - name: they stay
    points: 3
    hint: h
    explanation: e
    needs: [two web pods]
    try:
    - wait: {expr: 'len(pods("app=web")) == 2', timeout: 1h}
  - name: node ready
    points: 1
    hint: look at the nodes
    explanation: one node
    needs: []
    try:
    - assert: {expr: 'len(nodes()) == 1 && nodes()[0].ready'}
`))
	if err != nil {
		t.Fatal(err)
	}
	sub := configMapSubmission(t, ex)
	r, _ := enginetest.Fake(t, oneReadyNode)
	g, err := grade.Run(t.Context(), r, ex, sub, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if g.Score != 1 || !slices.Equal(g.Failed(), []string{"two web pods", "they stay"}) {
		t.Fatalf("score %d, failed %q; want 1, [two web pods they stay]", g.Score, g.Failed())
	}
	c := g.Checks[1]
	if c.Status != engine.Failed || c.Earned != 0 || len(c.Ops) != 0 || c.Error != `not run: it needs "two web pods", which did not pass` {
		t.Errorf("the check that needs the failed one: status %s, earned %d, %d operations run, error %q", c.Status, c.Earned, len(c.Ops), c.Error)
	}
}

// TestGradeRefusalsComeFirstAndNothingValidBootsNothing: refusals are
// reported before any cluster is asked for, and a submission with nothing
// left to apply scores 0 without a cluster.
func TestGradeRefusalsComeFirstAndNothingValidBootsNothing(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: tiny, title: Tiny}
spec:
  statement: Make a ConfigMap.
  submission: {kinds: [ConfigMap]}
  checks:
  - name: exists
    points: 2
    hint: h
    explanation: e
    try:
    - assert: {expr: 'true'}
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")

	var events []string
	boots := 0
	r := &engine.Runner{
		Progress: func(p engine.Progress) { events = append(events, p.Message) },
		Backend: func(cluster.Topology) (cluster.Backend, error) {
			boots++
			events = append(events, "<boot>")
			return nil, errors.New("no cluster in this test")
		},
	}
	sub, err := grade.ReadSubmission(dir, &ex.Spec.Submission)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grade.Run(t.Context(), r, ex, sub, "")
	if err != nil {
		t.Fatal(err)
	}
	if boots != 0 || g.Status != grade.StatusRefused || g.Score != 0 || g.Passed || !strings.Contains(g.Error, "nothing to grade") {
		t.Errorf("all refused: %d boots, status %s, score %d, error %q; want no boot, refused, 0, a reason", boots, g.Status, g.Score, g.Error)
	}
	if len(g.Checks) != 1 || g.Checks[0].Status != engine.Skipped {
		t.Errorf("checks %+v, want the one check not run", g.Checks)
	}

	// With something valid left, the refusal still comes before the boot.
	write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	events = nil
	if sub, err = grade.ReadSubmission(dir, &ex.Spec.Submission); err != nil {
		t.Fatal(err)
	}
	if _, err := grade.Run(t.Context(), r, ex, sub, ""); err != nil {
		t.Fatal(err)
	}
	if boots == 0 || len(events) < 2 || !strings.Contains(events[0], "pod.yaml:1:1: Pod default/p: refused (kind-not-allowed)") {
		t.Errorf("events %q: want the refusal first, then the boot", events)
	}
}

// configMapSubmission is a submission of one ConfigMap for ex.
func configMapSubmission(t *testing.T, ex *grade.Exercise) *grade.Submission {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub, err := grade.ReadSubmission(dir, &ex.Spec.Submission)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
