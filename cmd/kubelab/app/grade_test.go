package app_test

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/cmd/kubelab/app"
	"kubelab.dev/kubelab/internal/testbin"
)

// gradeCLI runs the kubelab binary from the repository root with env
// added, and returns its combined output and exit code.
func gradeCLI(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the kubelab binary")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join("..", "..", "..")
	cmd.Env = append(append(os.Environ(), "KUBELAB_HOME="+t.TempDir()), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestGradeWritesReportsAndExitsOnThePassingScore(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	dir := t.TempDir()
	summary := filepath.Join(dir, "step-summary.md")
	j, x, md, page := filepath.Join(dir, "g.json"), filepath.Join(dir, "g.xml"), filepath.Join(dir, "g.md"), filepath.Join(dir, "g.html")
	out, code := gradeCLI(t, []string{"GITHUB_STEP_SUMMARY=" + summary},
		"grade", "exercises/rbac-least-privilege", "--submission", "exercises/rbac-least-privilege/wrong/wildcard",
		"--learner", "bob", "--json", j, "--junit", x, "--markdown", md, "--html", page)
	if code != app.ExitFailed {
		t.Fatalf("a 5/10 submission exited %d, want %d:\n%s", code, app.ExitFailed, out)
	}
	for _, want := range []string{
		"✘  0/2  it cannot change anything",
		"`kubectl auth can-i delete pods -n shop --as=system:serviceaccount:shop:reporter` to fail with output matching /^no/",
		"observed: it succeeded; output: yes",
		"hint: Grant read verbs only",
		"Score: 5/10, FAILED (passing score 8)",
		"kubelab: rbac-least-privilege: score 5/10 is below the passing score 8",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	var g struct {
		Score, Max int
		Passed     bool
		Checks     []struct {
			Name     string
			Points   int
			Earned   int
			Expected string
			Observed string
		}
		Timeline []json.RawMessage
	}
	readJSON(t, j, &g)
	if g.Score != 5 || g.Max != 10 || g.Passed || len(g.Checks) != 7 || len(g.Timeline) == 0 {
		t.Errorf("JSON report: %+v", g)
	}
	if c := g.Checks[4]; c.Name != "it cannot read other ConfigMaps" || c.Earned != 0 || c.Points != 2 || c.Observed == "" {
		t.Errorf("JSON check: %+v", c)
	}

	var suites struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name  string `xml:"name,attr"`
				Props []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(x)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatal(err)
	}
	if len(suites.Suites) != 1 || suites.Suites[0].Name != "rbac-least-privilege/bob" || len(suites.Suites[0].Cases) != 7 {
		t.Fatalf("JUnit: %+v", suites)
	}
	failures := 0
	for _, c := range suites.Suites[0].Cases {
		if len(c.Props) != 2 || c.Props[0].Name != "points" || c.Props[1].Name != "earned" {
			t.Errorf("testcase %q properties %+v, want points and earned", c.Name, c.Props)
		}
		if c.Failure != nil {
			failures++
		}
	}
	if failures != 3 {
		t.Errorf("JUnit has %d failures, want 3", failures)
	}

	mdData, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mdData), "## ❌ rbac-least-privilege: 5/10 (failed, passing score 8)") ||
		!strings.Contains(string(mdData), "| ❌ | it cannot change anything | 0/2 |") {
		t.Errorf("Markdown summary:\n%s", mdData)
	}
	html, rows := htmlReport(t, page)
	if rows != 7 || !strings.Contains(html, `data-score="5" data-max="10"`) ||
		!strings.Contains(html, "<b>it cannot change anything (0/2 points)</b><pre>lost 2 of 2 points\nexpected: ") {
		t.Errorf("HTML report (%d step rows, want 7):\n%s", rows, html)
	}
	sumData, err := os.ReadFile(summary)
	if err != nil || string(sumData) != string(mdData) {
		t.Errorf("$GITHUB_STEP_SUMMARY (%v) differs from --markdown:\n%s", err, sumData)
	}

	out, code = gradeCLI(t, nil, "grade", "exercises/rbac-least-privilege", "--submission", "exercises/rbac-least-privilege/solution")
	if code != 0 || !strings.Contains(out, "Score: 10/10, PASSED") {
		t.Errorf("the reference solution: exit %d\n%s", code, out)
	}
}

// TestGradeRefusesBeforeBooting: refusals are printed before any cluster
// boots, and a submission with nothing valid left boots none: score 0,
// the reason, exit code 2.
func TestGradeRefusesBeforeBooting(t *testing.T) {
	sub := t.TempDir()
	if err := os.WriteFile(filepath.Join(sub, "debug.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: debug, namespace: shop}\nspec: {containers: [{name: sh, image: busybox}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "g.html")
	out, code := gradeCLI(t, nil, "grade", "exercises/rbac-least-privilege", "--submission", sub, "--html", page)
	if code != app.ExitInvalid {
		t.Errorf("exit %d, want %d:\n%s", code, app.ExitInvalid, out)
	}
	for _, want := range []string{"debug.yaml:1:1: Pod shop/debug: refused (kind-not-allowed)", "nothing to grade", "Score: 0/10"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "booting cluster") {
		t.Errorf("booted a cluster for a submission with nothing valid:\n%s", out)
	}
	if html, _ := htmlReport(t, page); !strings.Contains(html, `<span class="status refused">refused</span>`) ||
		!strings.Contains(html, `data-score="0" data-max="10"`) || !strings.Contains(html, "Pod shop/debug: refused (kind-not-allowed)") {
		t.Errorf("HTML report of a refused submission:\n%s", html)
	}
}

// htmlReport reads an HTML report and counts its step rows.
func htmlReport(t *testing.T, path string) (string, int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no HTML report: %v", err)
	}
	return string(b), strings.Count(string(b), `<tr class="step"`)
}

// TestGradeBatchWritesScoreboard grades two learners on fake clusters,
// each showing its learner's pods: the scoreboard's CSV, JSON and table,
// and a report per learner under --out.
func TestGradeBatchWritesScoreboard(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	h.fc.StateFor = func(name string) assertionstest.State {
		if strings.HasPrefix(name, "web-ann-") {
			return webPods(2)
		}
		return webPods(1)
	}
	ex := filepath.Dir(writeTestFile(t, filepath.Join(t.TempDir(), "web", "exercise.yaml"), webExercise))
	subs, out := t.TempDir(), t.TempDir()
	for _, learner := range []string{"ann", "ben"} {
		writeTestFile(t, filepath.Join(subs, learner, "web.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
	}
	text, code := h.run(t.Context(), "grade", ex, "--submissions", subs, "--out", out)
	if code != 0 {
		t.Fatalf("batch grading exited %d, want 0 (a learner's fail is not the batch's):\n%s", code, text)
	}
	f, err := os.Open(filepath.Join(out, "scoreboard.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1][0] != "ann" || rows[1][1] != "3" || rows[1][3] != "true" || rows[2][0] != "ben" || rows[2][1] != "1" || rows[2][3] != "false" {
		t.Errorf("scoreboard.csv: %q", rows)
	}
	var board struct {
		Learners []struct{ Learner string }
	}
	readJSON(t, filepath.Join(out, "scoreboard.json"), &board)
	if len(board.Learners) != 2 {
		t.Errorf("scoreboard.json: %+v", board)
	}
	for _, f := range []string{"ann.json", "ann.md", "ben.json", "ben.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("per-learner report: %v", err)
		}
	}
	if !strings.Contains(text, "ben      1/3    failed") {
		t.Errorf("no scoreboard table in the output:\n%s", text)
	}
}

func TestExerciseInitValidateShow(t *testing.T) {
	dir := t.TempDir()
	out, code := gradeCLI(t, nil, "exercise", "init", "rolling-update", "--dir", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	root := filepath.Join(dir, "rolling-update")
	out, code = gradeCLI(t, nil, "exercise", "validate", root)
	if code != 0 || !strings.Contains(out, "ok (rolling-update, 3 checks, 5 points, 2 samples)") {
		t.Fatalf("validate of a scaffold: exit %d\n%s", code, out)
	}
	out, code = gradeCLI(t, nil, "exercise", "show", root)
	if code != 0 || !strings.Contains(out, "# Run three replicas of web behind a Service") || !strings.Contains(out, "Passing score: 3 of 5") ||
		strings.Contains(out, "Look at spec.replicas") {
		t.Errorf("show: exit %d, want the statement without hints:\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(root, "exercise.yaml"), []byte("apiVersion: kubelab.dev/v1alpha1\nkind: Exercise\nmetadata: {name: x, title: X}\nspec:\n  statement: S\n  submission: {kinds: [Deploymnt]}\n  checks: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = gradeCLI(t, nil, "exercise", "validate", root)
	if code != app.ExitInvalid || !strings.Contains(out, `exercise.yaml:6:24: spec.submission.kinds[0]: unknown kind "Deploymnt"`) ||
		!strings.Contains(out, "exercise.yaml:7:11: spec.checks: want at least one check") {
		t.Errorf("validate of a broken exercise: exit %d\n%s", code, out)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestExampleWorkflowsUseRealFlags parses the kubelab command lines of the
// GitHub Actions examples with the real command tree, so the examples
// cannot drift from the flags.
func TestExampleWorkflowsUseRealFlags(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "examples", "github-actions", "*.yml"))
	if len(files) < 2 {
		t.Fatalf("found %d example workflows, want 2", len(files))
	}
	expr := regexp.MustCompile(`\$\{\{[^}]*\}\}`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct{ Run string }
			}
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		graded := 0
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				_, line, ok := strings.Cut(st.Run, "bin/kubelab ")
				if !ok {
					continue
				}
				args := shellWords(expr.ReplaceAllString(line, "x"))
				root := app.NewRootCommand(app.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
				cmd, rest, err := root.Find(args)
				if err != nil || cmd.Name() != "grade" {
					t.Errorf("%s: %q is not a grade command (%v)", f, line, err)
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Errorf("%s: %q: %v", f, line, err)
					continue
				}
				if n := len(cmd.Flags().Args()); n != 1 {
					t.Errorf("%s: %q has %d positional arguments, want the exercise only", f, line, n)
				}
				graded++
			}
		}
		if graded == 0 {
			t.Errorf("%s runs no kubelab grade command", f)
		}
	}
}

// shellWords splits a command line on blanks, honouring double quotes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case !quoted && (r == ' ' || r == '\n' || r == '\t'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// TestGradeShowsAForgedNameEscaped: a submission whose object name
// carries terminal control sequences is refused before booting, and
// neither the refusal nor the summary nor the error line prints them raw
// (they would erase the line and forge a passing score).
func TestGradeShowsAForgedNameEscaped(t *testing.T) {
	sub := t.TempDir()
	manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"x\\e[2K\\r\\e[32mspread-replicas: score 10/10 PASSED\\e[0m\\e[8m\"\n" +
		"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}\n"
	if err := os.WriteFile(filepath.Join(sub, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gradeCLI(t, nil, "grade", "exercises/spread-replicas", "--submission", sub)
	if code != app.ExitInvalid {
		t.Errorf("exit %d, want %d:\n%s", code, app.ExitInvalid, out)
	}
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("output carries control characters raw: %q", out)
	}
	if !strings.Contains(out, `x\x1b[2K\r\x1b[32mspread-replicas: score 10/10 PASSED`) {
		t.Errorf("output does not show the name escaped:\n%s", out)
	}
}
