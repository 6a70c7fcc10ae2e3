package grade_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
)

// TestBatchScoreboard grades four learners two at a time on fake
// clusters, each showing its learner's pods, and checks every cell of the
// scoreboard: scores, failed checks, refusals, the learner nothing of
// whose submission was valid. (The exercises' samples are graded on real
// clusters by the exercises package.)
func TestBatchScoreboard(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: web, title: Web}
spec:
  statement: Run the web pods.
  passingScore: 4
  submission: {kinds: [ConfigMap]}
  checks:
  - name: a node is ready
    points: 1
    hint: h
    explanation: e
    try:
    - sleep: {duration: 300ms} # long enough for two gradings to overlap
    - assert: {expr: 'len(nodes()) == 1'}
  - name: a web pod runs
    points: 2
    hint: h
    explanation: e
    try:
    - assert: {expr: 'len(pods("app=web")) >= 1'}
  - name: two web pods run
    points: 2
    hint: h
    explanation: e
    try:
    - assert: {expr: 'len(pods("app=web")) == 2'}
`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"alice", "bob", "carol"} {
		write(l+"/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
	}
	// dave hands in a privileged debugging pod and notes: both refused
	// (a Pod is not allowed, and privileged never is), nothing applied.
	write("dave/debug.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n  containers:\n  - {name: sh, image: busybox, securityContext: {privileged: true}}\n")
	write("dave/NOTES.md", "I ran out of time.\n")
	webPods := map[string]int{"alice": 2, "bob": 1, "carol": 0}

	r, fc := enginetest.Fake(t, assertionstest.State{})
	fc.StateFor = func(name string) assertionstest.State {
		s := oneReadyNode
		for l, n := range webPods {
			if strings.HasPrefix(name, "web-"+l+"-") {
				for i := range n {
					s.Pods = append(s.Pods, assertions.Pod{Name: "web-" + string(rune('a'+i)), Labels: map[string]string{"app": "web"}})
				}
			}
		}
		return s
	}
	learners, err := grade.Learners(root)
	if err != nil {
		t.Fatal(err)
	}
	grades, err := grade.RunAll(context.WithoutCancel(t.Context()), r, ex, learners, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fc.Backends()); n != 3 {
		t.Errorf("%d clusters, want 3 (none for dave)", n)
	}
	if got := maxOverlap(grades); got != 2 {
		t.Errorf("at most %d gradings ran at the same time, want exactly 2 (--parallel 2)", got)
	}

	var csvOut, jsonOut strings.Builder
	sb := grade.NewScoreboard(ex, grades)
	if err := sb.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	if err := sb.WriteJSON(&jsonOut); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"learner", "score", "max", "passed", "status", "refused", "duration_seconds",
			"a node is ready (1)", "a web pod runs (2)", "two web pods run (2)", "error"},
		{"alice", "5", "5", "true", "graded", "0", "*", "1", "2", "2", ""},
		{"bob", "3", "5", "false", "graded", "0", "*", "1", "2", "0", ""},
		{"carol", "1", "5", "false", "graded", "0", "*", "1", "0", "0", ""},
		{"dave", "0", "5", "false", "refused", "2", "*", "0", "0", "0", "nothing to grade: both parts of the submission broke the exercise's contract (see the refusals)"},
	}
	if len(rows) != len(want) {
		t.Fatalf("scoreboard has %d rows, want %d:\n%s", len(rows), len(want), csvOut.String())
	}
	for i := range want {
		for j := range want[i] {
			if j >= len(rows[i]) || want[i][j] != "*" && rows[i][j] != want[i][j] {
				t.Errorf("scoreboard row %d:\n got %q\nwant %q", i, rows[i], want[i])
				break
			}
		}
	}
	var board struct {
		Exercise string `json:"exercise"`
		Max      int    `json:"max"`
		Learners []struct {
			Learner string `json:"learner"`
			Score   int    `json:"score"`
			Passed  bool   `json:"passed"`
			Earned  []int  `json:"earned"`
		} `json:"learners"`
	}
	if err := json.Unmarshal([]byte(jsonOut.String()), &board); err != nil {
		t.Fatal(err)
	}
	if board.Exercise != "web" || board.Max != 5 || len(board.Learners) != 4 ||
		board.Learners[0].Learner != "alice" || !board.Learners[0].Passed || board.Learners[3].Score != 0 ||
		!slices.Equal(board.Learners[1].Earned, []int{1, 2, 0}) {
		t.Errorf("scoreboard JSON:\n%s", jsonOut.String())
	}
	dave := grades[3]
	if !slices.Equal(dave.RefusedRules(), []string{"kind-not-allowed", "privileged"}) || len(dave.Objects) != 0 ||
		!slices.Equal(dave.Ignored, []string{"NOTES.md"}) || !strings.Contains(dave.Refused[1].Error(), "debug.yaml:1:1: Pod default/debug: refused (privileged)") {
		t.Errorf("dave: refused %v, applied %v, ignored %v", dave.Refused, dave.Objects, dave.Ignored)
	}
}

// maxOverlap is the largest number of gradings that were running at the
// same moment.
func maxOverlap(grades []*grade.Grade) int {
	best := 0
	for _, a := range grades {
		n := 0
		for _, b := range grades {
			if !b.Started.After(a.Started) && b.Started.Add(b.Duration).After(a.Started) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}
