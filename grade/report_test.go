package grade

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/report"
)

// sampleGrade is a grade with every kind of content a report shows: a
// refusal, an object the API server rejected, an ignored file, a passed
// check and failed ones (an expression, a command, a check not run).
func sampleGrade() (*Exercise, *Grade) {
	ex := &Exercise{Metadata: v1alpha1.ExerciseMetadata{Name: "spread", Title: "Spread | replicas"}, Spec: ExerciseSpec{
		PassingScore: 4,
		Checks: []Check{
			{Name: "three ready replicas", Points: 2}, {Name: "one per node", Points: 3},
			{Name: "can-i", Points: 1}, {Name: "survives a node", Points: 2},
		},
	}}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	g := &Grade{
		Exercise: "spread", Title: "Spread | replicas", File: "exercises/spread/exercise.yaml", Learner: "alice",
		Submission: "class/alice", Status: StatusGraded, Score: 2, Max: 8, PassingScore: 4, Started: start,
		Duration: 42 * time.Second, BootDuration: 5 * time.Second,
		Refused: []Refusal{{File: "debug.yaml", Line: 1, Column: 1, Object: "Pod default/debug", Rule: RulePrivileged,
			Message: `container "sh" sets securityContext.privileged: true`}},
		Objects: []AppliedObject{
			{File: "web.yaml", Line: 1, Object: "Deployment default/web", Applied: true},
			{File: "web.yaml", Line: 20, Object: "Service default/web", Error: `Service "web" is invalid: spec.ports: Required value`},
		},
		Ignored: []string{"README.md"},
		Checks: []CheckResult{
			{Name: "three ready replicas", Points: 2, Earned: 2, Status: engine.Passed, Hint: "h1", Explanation: "e1", Duration: time.Second},
			{Name: "one per node", Points: 3, Status: engine.Failed, Hint: "Look at\n  anti-affinity.", Explanation: "Replicas on one node die together.",
				Expected: "`len(uniq(map(pods(\"app=web\"), .node))) == 3` to hold within 10s",
				Observed: "  len(uniq(map(pods(\"app=web\"), .node))) = 1", Error: "wait (exercise.yaml:60): expected ...", Duration: 10 * time.Second,
				Ops: []engine.OpResult{{Kind: "wait", Summary: "wait len(...) == 3", Status: engine.Failed, Duration: 10 * time.Second}}},
			{Name: "can-i", Points: 1, Status: engine.Failed, Hint: "Grant read verbs only.", Explanation: "e3",
				Expected: "`kubectl auth can-i delete pods` to fail with output matching /^no/", Observed: "it succeeded; output: yes"},
			{Name: "survives a node", Points: 2, Status: engine.Failed, Hint: "h4", Explanation: "e4",
				Error: "not run: the exercise's time limit of 5m0s was reached"},
		},
		Timeline: []engine.TimelineEvent{{At: time.Second, Kind: engine.EventStep, Subject: "one per node", Detail: "started"}},
	}
	return ex, g
}

// TestGradeReports compares each report of a sample grade with its golden
// file (testdata/golden; rewrite them with -update).
func TestGradeReports(t *testing.T) {
	ex, g := sampleGrade()
	sb := NewScoreboard(ex, []*Grade{g, {Learner: "bob", Status: StatusError, Max: 8, Error: "cluster did not come up\nmore"}})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"summary.txt":    func(b *bytes.Buffer) error { WriteSummary(b, nil, g); return nil },
		"summary.md":     func(b *bytes.Buffer) error { return WriteMarkdown(b, g) },
		"junit.xml":      func(b *bytes.Buffer) error { return WriteJUnit(b, []*Grade{g}) },
		"grade.json":     func(b *bytes.Buffer) error { return WriteJSON(b, g) },
		"scoreboard.csv": func(b *bytes.Buffer) error { return sb.WriteCSV(b) },
		"scoreboard.md":  func(b *bytes.Buffer) error { return sb.WriteMarkdown(b) },
		"scoreboard.txt": func(b *bytes.Buffer) error { return sb.WriteTable(b) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name)
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (create it with -update)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("%s differs from %s (rewrite with -update if intended):\n%s", name, golden, got)
			}
		})
	}
}

func TestExerciseStatementHidesTheAnswers(t *testing.T) {
	ex, err := LoadExercise("testdata/valid-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteExerciseStatement(&b, nil, ex); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"# Every field of an exercise", "Run a Deployment **web** with 2 replicas.",
		"of these kinds: Deployment, Service, PriorityClass; in namespace shop or default", "| survives a node | 3 |",
		"worker nodes worker-1, worker-2", "Passing score: 4 of 5. Time limit: 3m."} {
		if !strings.Contains(out, want) {
			t.Errorf("statement lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"Spread them.", "Teachers only.", "samples/", "nodeDown"} {
		if strings.Contains(out, secret) {
			t.Errorf("statement shows %q, which is for teachers:\n%s", secret, out)
		}
	}
}

// TestGradeMarkdownEscapesPipesInCells: a learner's file name is data; a
// `|` in it must not split the table's row into more cells.
func TestGradeMarkdownEscapesPipesInCells(t *testing.T) {
	_, g := sampleGrade()
	g.Refused[0].File = "de|bug.yaml"
	g.Refused[0].Object = "Pod default/a|b"
	g.Objects[1].File = "w|eb.yaml"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, g); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(line, "|") || !strings.Contains(line, "bug.yaml") && !strings.Contains(line, "eb.yaml:") {
			continue
		}
		rows++
		// Cells are separated by pipes that are not escaped.
		cells := strings.Count(line, "|") - strings.Count(line, `\|`) - 1
		want := 4
		if strings.Contains(line, "eb.yaml") {
			want = 3
		}
		if cells != want {
			t.Errorf("row has %d cells, want %d: %s", cells, want, line)
		}
	}
	if rows != 2 {
		t.Errorf("found %d table rows with the file names, want 2:\n%s", rows, b.String())
	}
}

// TestReportsShowHostileTextEscaped feeds names that carry terminal
// control sequences (a forged "PASSED" line, a bidi override, a C1 CSI)
// through every report of a grade and of a scoreboard: none may carry
// one raw, each shows it escaped.
func TestReportsShowHostileTextEscaped(t *testing.T) {
	const forged = "x\x1b[2K\r\x1b[32mspread-replicas: score 10/10 PASSED\x1b[0m\x1b[8m"
	ex, g := sampleGrade()
	g.Learner = forged
	g.Submission = "class/" + forged
	g.Refused[0].Object = "Pod default/" + forged
	g.Refused[0].Message = "name \u202eevil\u202c is refused"
	g.Objects[1].Object = "Service default/" + forged
	g.Objects[1].Error = "rejected: \u009b31m"
	g.Checks[1].Observed = "  pod " + forged + " on node-1"
	g.Checks[2].Observed = "it succeeded; output: " + forged
	g.Timeline[0].Detail = forged
	sb := NewScoreboard(ex, []*Grade{g})
	var js bytes.Buffer
	if err := engine.WriteJSON(&js, []*engine.Result{g.Result()}); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"summary":          func(b *bytes.Buffer) error { WriteSummary(b, nil, g); return nil },
		"markdown":         func(b *bytes.Buffer) error { return WriteMarkdown(b, g) },
		"junit":            func(b *bytes.Buffer) error { return WriteJUnit(b, []*Grade{g}) },
		"html":             func(b *bytes.Buffer) error { return report.HTML(b, js.Bytes()) },
		"lab summary":      func(b *bytes.Buffer) error { engine.WriteSummary(b, nil, []*engine.Result{g.Result()}); return nil },
		"lab junit":        func(b *bytes.Buffer) error { return engine.WriteJUnit(b, []*engine.Result{g.Result()}) },
		"scoreboard csv":   func(b *bytes.Buffer) error { return sb.WriteCSV(b) },
		"scoreboard md":    func(b *bytes.Buffer) error { return sb.WriteMarkdown(b) },
		"scoreboard table": func(b *bytes.Buffer) error { return sb.WriteTable(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := b.String()
		for _, raw := range []string{"\x1b", "\r", "\u202e", "\u009b"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s carries %q raw:\n%s", name, raw, out)
			}
		}
		if !strings.Contains(out, `x\x1b[2K\r\x1b[32mspread-replicas`) {
			t.Errorf("%s does not show the forged name escaped:\n%s", name, out)
		}
	}
}
