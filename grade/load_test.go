package grade

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/internal/loadertest"
	"kubelab.dev/kubelab/load"
)

func TestLoadExerciseValid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid fixtures: %v", err)
	}
	for _, f := range files {
		ex, err := LoadExercise(f)
		if err != nil {
			t.Errorf("LoadExercise(%s):\n%v", f, err)
			continue
		}
		for path, op := range exerciseOps(ex) {
			if op.Pos().Line == 0 || op.Timeout.Duration <= 0 {
				t.Errorf("%s: %s has no position or timeout", f, path)
			}
		}
	}
}

func TestLoadExerciseDefaults(t *testing.T) {
	ex, err := LoadExercise("testdata/valid-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := ex.MaxScore(); got != 5 {
		t.Errorf("MaxScore = %d, want 5", got)
	}
	if got := ex.PassingScore(); got != 4 {
		t.Errorf("PassingScore = %d, want 4", got)
	}
	if ex.Timeout() != 3*time.Minute || ex.Spec.Cluster.Workers != 2 || len(ex.Spec.Cluster.Nodes) != 2 {
		t.Errorf("timeout %s, topology %+v", ex.Timeout(), ex.Spec.Cluster)
	}
	if ex.Spec.Submission.DefaultNamespace() != "shop" || ex.Spec.Submission.MaxObjects != 5 {
		t.Errorf("contract %+v", ex.Spec.Submission)
	}
	if ex.CheckPos(0).Line != 27 {
		t.Errorf("first check at line %d, want 27", ex.CheckPos(0).Line)
	}
	if _, ok := ex.Bindings()["nodesBefore"]; !ok {
		t.Errorf("binding recorded in setup not known: %v", ex.Bindings())
	}

	min, err := LoadExerciseBytes("testdata/inline.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Pod]}
  checks:
  - {name: a, points: 2, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
  - {name: b, points: 3, hint: h, explanation: e, try: [{sleep: {duration: 1s}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if min.PassingScore() != 5 || min.Timeout() != DefaultExerciseTimeout || !slices.Equal(min.Spec.Submission.Namespaces, []string{"default"}) ||
		min.Spec.Submission.MaxObjects != DefaultMaxObjects || min.Spec.Checks[1].Try[0].Timeout.Duration != 31*time.Second {
		t.Errorf("defaults not filled: %+v", min.Spec)
	}
}

func TestLoadExerciseDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := InitExercise(dir, "my-task"); err != nil {
		t.Fatal(err)
	}
	ex, err := LoadExercise(filepath.Join(dir, "my-task"))
	if err != nil {
		t.Fatalf("a scaffolded exercise does not load:\n%v", err)
	}
	if ex.Metadata.Name != "my-task" || len(ex.Spec.Samples) < 2 {
		t.Errorf("scaffold: name %q, %d samples", ex.Metadata.Name, len(ex.Spec.Samples))
	}
	if err := InitExercise(dir, "my-task"); err == nil {
		t.Errorf("InitExercise overwrote an existing exercise")
	}
	if err := InitExercise(dir, "Not A Name"); err == nil {
		t.Errorf("InitExercise accepted an invalid name")
	}
}

func TestLoadExerciseInvalid(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid-*.yaml")
	if err != nil || len(files) < 8 {
		t.Fatalf("%d invalid fixtures (%v), want at least 8", len(files), err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			wants := loadertest.Wants(t, f)
			if len(wants) == 0 {
				t.Fatalf("%s has no # want: lines", f)
			}
			ex, err := LoadExercise(f)
			var ps *load.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("LoadExercise = %v, %v; want *Problems", ex, err)
			}
			loadertest.CheckProblems(t, wants, ps.List)
		})
	}
}

// TestDestructiveIsInferred: a check that changes the cluster is
// destructive whatever it says, so kubelab check never runs it while a
// learner works; one made of reads is not, and a script or command that
// says it only reads is believed.
func TestDestructiveIsInferred(t *testing.T) {
	ex, err := LoadExerciseBytes("testdata/inline.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Deployment]}
  checks:
  - {name: reads, points: 1, hint: h, explanation: e, try: [{wait: {expr: 'true'}}, {kubectl: {args: [get, pods]}}, {kubectl: {args: [auth, can-i, get, pods]}}]}
  - {name: cordons, points: 1, hint: h, explanation: e, try: [{assert: {expr: 'true'}}], finally: [{uncordon: {node: worker-1}}]}
  - {name: deletes, points: 1, hint: h, explanation: e, try: [{kubectl: {args: [delete, pod, x]}}]}
  - {name: dry run, points: 1, hint: h, explanation: e, try: [{kubectl: {args: [apply, -f, x.yaml, --dry-run=server]}}]}
  - {name: a script, points: 1, hint: h, explanation: e, try: [{script: {command: 'kubectl get pods'}}]}
  - {name: a reading script, points: 1, hint: h, explanation: e, try: [{script: {command: 'kubectl get pods', readOnly: true}}]}
  - {name: said so, points: 1, hint: h, explanation: e, destructive: true, try: [{assert: {expr: 'true'}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"reads": false, "cordons": true, "deletes": true, "dry run": false, "a script": true, "a reading script": false, "said so": true}
	for _, ch := range ex.Spec.Checks {
		if got := ch.IsDestructive(); got != want[ch.Name] {
			t.Errorf("check %q: destructive %t, want %t", ch.Name, got, want[ch.Name])
		}
	}
}

func TestLoadExerciseLiveFields(t *testing.T) {
	ex, err := LoadExerciseBytes("testdata/inline.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Deployment], namespaces: [shop]}
  checks:
  - {name: hurts, points: 2, hint: h, explanation: e, destructive: true, try: [{assert: {expr: 'true'}}]}
  - {name: b, points: 3, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
  protect:
  - {kind: Deployment, name: web}
  - {kind: ClusterRole, name: view, message: keep it}
  setupScore: {score: 3, fails: [hurts]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := checkOrder(ex); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("checkOrder = %v, want the destructive check last", got)
	}
	p := ex.Spec.Protect
	if p[0].Namespace != "shop" || p[0].UIDKey() != "Deployment.shop.web" || !strings.Contains(p[0].DefaultMessage(), "Deployment shop/web is part of the exercise") {
		t.Errorf("protect[0] = %+v (key %s, message %q): want the contract's namespace and a default message", p[0], p[0].UIDKey(), p[0].DefaultMessage())
	}
	if p[1].Namespace != "" || p[1].UIDKey() != "ClusterRole.view" || p[1].DefaultMessage() != "keep it" {
		t.Errorf("protect[1] = %+v", p[1])
	}
	_, err = LoadExerciseBytes("testdata/inline.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Deployment]}
  checks:
  - {name: a, points: 2, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
  setupScore: {score: 1, fails: [a]}
`))
	if err == nil || !strings.Contains(err.Error(), "score 1 does not match the checks it fails: 2 points minus 2 lost = 0") {
		t.Errorf("a setup score that does not add up: %v", err)
	}
}

func TestLoadExerciseMistakes(t *testing.T) {
	const head = `apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Deployment]}
  checks:
  - {name: stays, points: 3, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
  - {name: goes, points: 2, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
  mistakes:
`
	ex, err := LoadExerciseBytes("testdata/inline.yaml", []byte(head+`  - {name: delete-it, do: [{kubectl: {args: [delete, deployment, web]}}], score: 3, fails: [goes]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if m := ex.Mistake("delete-it"); m == nil || len(m.Do) != 1 || m.Do[0].Kubectl == nil || m.Score != 3 {
		t.Errorf("Mistake(delete-it) = %+v, want its operation and score", m)
	}
	if ex.Mistake("other") != nil {
		t.Error("Mistake(other) found a mistake that is not documented")
	}
	for _, tc := range []struct{ mistakes, want string }{
		{`  - {name: a, do: [{assert: {expr: 'true'}}], score: 4, fails: [goes]}
`, "spec.mistakes[0].score: score 4 does not match the checks it fails: 5 points minus 2 lost = 3"},
		{`  - {name: a, do: [{assert: {expr: 'true'}}], score: 5, fails: [gone]}
`, `spec.mistakes[0].fails[0]: unknown check "gone" (did you mean "goes"?)`},
		{`  - {name: A_B, do: [{assert: {expr: 'true'}}], score: 5}
`, `invalid name "A_B": want a DNS label`},
		{`  - {name: a, do: [{assert: {expr: 'true'}}], score: 5}
  - {name: a, do: [{assert: {expr: 'true'}}], score: 5}
`, `duplicate mistake "a"`},
		{`  - {name: a, do: [{assert: {expr: 'tru'}}], score: 5}
`, "spec.mistakes[0].do[0]"},
		{`  - {name: a, do: [], score: 5}
`, "spec.mistakes[0].do"},
	} {
		_, err := LoadExerciseBytes("testdata/inline.yaml", []byte(head+tc.mistakes))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("mistakes\n%s: got %v, want an error with %q", tc.mistakes, err, tc.want)
		}
	}
}

func TestExerciseCheckLive(t *testing.T) {
	ex, err := LoadExercise("testdata/valid-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.CheckLive(); !errors.Is(err, ErrNotLive) || !strings.Contains(err.Error(), "nodesBefore") {
		t.Errorf("CheckLive of an exercise that records in setup = %v, want ErrNotLive naming nodesBefore", err)
	}
}

func TestWriteLiveStatement(t *testing.T) {
	ex, err := LoadExercise("../exercises/tolerate-noexecute")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteLiveStatement(&b, nil, ex); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# " + ex.Metadata.Title, "| two ready replicas on worker-2 | 2 |", "| they leave an unreachable node within 10 seconds (destructive: only `kubelab check --final` runs it) | 3 |", "Passing score: 8 of 10."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("live statement lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), ex.Spec.Checks[0].Hint) {
		t.Errorf("live statement shows a hint:\n%s", b.String())
	}
}

// TestLoadExerciseNeeds: a check needs only checks that exist and run
// before it, and a documented score cannot pass a check whose need fails.
func TestLoadExerciseNeeds(t *testing.T) {
	const head = `apiVersion: kubelab.dev/v1alpha1
kind: Exercise
metadata: {name: m, title: M}
spec:
  statement: S
  submission: {kinds: [Deployment]}
  checks:
  - {name: runs, points: 3, hint: h, explanation: e, try: [{assert: {expr: 'true'}}]}
`
	ex, err := LoadExerciseBytes("testdata/inline.yaml", []byte(head+`  - {name: survives, points: 2, hint: h, explanation: e, needs: [runs], try: [{cordon: {node: worker-1}}]}
  mistakes:
  - {name: a, do: [{assert: {expr: 'true'}}], score: 0, fails: [runs, survives]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := ex.Spec.Checks[1].Needs; len(got) != 1 || got[0] != "runs" {
		t.Errorf("needs = %q, want [runs]", got)
	}
	for _, tc := range []struct{ checks, want string }{
		{`  - {name: survives, points: 2, hint: h, explanation: e, needs: [run], try: [{assert: {expr: 'true'}}]}
`, `spec.checks[1].needs[0]: unknown check "run" (did you mean "runs"?)`},
		{`  - {name: survives, points: 2, hint: h, explanation: e, needs: [survives], try: [{assert: {expr: 'true'}}]}
`, `check "survives" needs itself`},
		{`  - {name: survives, points: 2, hint: h, explanation: e, needs: [cordons], try: [{assert: {expr: 'true'}}]}
  - {name: cordons, points: 1, hint: h, explanation: e, try: [{cordon: {node: worker-1}}]}
`, `spec.checks[1].needs[0]: check "cordons" runs after "survives" (as written, destructive checks last)`},
		{`  - {name: survives, points: 2, hint: h, explanation: e, needs: [runs], try: [{assert: {expr: 'true'}}]}
  mistakes:
  - {name: a, do: [{assert: {expr: 'true'}}], score: 2, fails: [runs]}
`, `spec.mistakes[0].fails: check "survives" needs "runs", which this fails: it cannot pass, add it to fails`},
	} {
		_, err := LoadExerciseBytes("testdata/inline.yaml", []byte(head+tc.checks))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checks\n%s: got %v, want an error with %q", tc.checks, err, tc.want)
		}
	}
}
