package app_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/internal/testbin"
)

// TestMain runs three of the tests that boot a cluster at once (they
// call t.Parallel; go test's default -parallel is one per core): each
// boots one small cluster and mostly waits on it.
func TestMain(m *testing.M) { os.Exit(enginetest.Main(m, 3)) }

func kubelab(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join("..", "..", "..")
	cmd.Env = append(os.Environ(), "KUBELAB_HOME="+t.TempDir())
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

func TestValidateReportsEveryProblemWithPositions(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the kubelab binary")
	}
	out, code := kubelab(t, "validate", "load/testdata/invalid-several.yaml", "labs/")
	if code == 0 {
		t.Fatalf("validate passed an invalid lab:\n%s", out)
	}
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		l = strings.TrimPrefix(l, "kubelab: ")
		if strings.HasPrefix(l, "load/testdata/invalid-several.yaml:") {
			lines++
		}
	}
	if lines < 3 {
		t.Errorf("want several positioned problems, got %d:\n%s", lines, out)
	}
	if out, code := kubelab(t, "validate", "labs/"); code != 0 {
		t.Errorf("shipped labs do not validate:\n%s", out)
	}
}

func TestRunFailingLabReportsObservedValues(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	if testing.Short() {
		t.Skip("boots a cluster")
	}
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.json")
	out, code := kubelab(t, "run", "cmd/kubelab/app/testdata/failing.yaml", "--junit", junit, "--json", js)
	if code != 1 {
		t.Fatalf("exit code %d, want 1:\n%s", code, out)
	}
	// The wait's 3 s timeout starts with the step, a moment before the
	// wait itself: it may say it waited 2.99s.
	waited := regexp.MustCompile(`expected len\(pods\("app=web"\)\) == 3 && node\("worker-1"\)\.ready to hold \(waited (2\.9\d*|3(\.\d+)?)s\)`)
	if !waited.MatchString(out) {
		t.Errorf("output lacks %q:\n%s", waited, out)
	}
	for _, want := range []string{
		`len(pods("app=web")) = 1`,
		`node("worker-1").ready = true`,
		"0 passed, 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	if suites.Failures != 1 || len(suites.Suites) != 1 || len(suites.Suites[0].Cases) != 3 {
		t.Fatalf("junit shape wrong: %+v", suites)
	}
	c := suites.Suites[0].Cases
	if c[0].Failure != nil || c[1].Failure == nil || c[2].Skipped == nil {
		t.Errorf("want pass, fail, skipped: %+v", c)
	}
	if !strings.Contains(string(b), `len(pods(&#34;app=web&#34;)) = 1`) {
		t.Errorf("junit failure lacks the observed values:\n%s", b)
	}

	b, err = os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Status   string `json:"status"`
			Timeline []struct {
				Kind string `json:"kind"`
			} `json:"timeline"`
			Steps []struct {
				Status string `json:"status"`
				Ops    []struct {
					Observed []struct{ Expr, Value string } `json:"observed"`
				} `json:"operations"`
			} `json:"steps"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Status != "failed" || r.Steps[1].Status != "failed" || len(r.Steps[1].Ops[0].Observed) == 0 {
		t.Errorf("json report wrong: %s", b)
	}
	pods := false
	for _, e := range r.Timeline {
		pods = pods || e.Kind == "pod"
	}
	if !pods {
		t.Errorf("timeline has no pod events: %s", b)
	}
}
