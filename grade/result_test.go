package grade

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/report"
)

// TestGradeAsHTMLReport draws a sample grade as a lab section of the HTML
// report: one step row per check, each lost point with its reason, the
// score and what was not applied.
func TestGradeAsHTMLReport(t *testing.T) {
	_, g := sampleGrade()
	var js, page bytes.Buffer
	if err := engine.WriteJSON(&js, []*engine.Result{g.Result()}); err != nil {
		t.Fatal(err)
	}
	if err := report.HTML(&page, js.Bytes()); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if n := len(regexp.MustCompile(`<tr class="step"`).FindAllString(html, -1)); n != len(g.Checks) {
		t.Errorf("%d step rows, want one per check (%d)", n, len(g.Checks))
	}
	for _, want := range []string{
		`data-lab="spread/alice"`, "Spread | replicas — alice", `<p class="score" data-score="2" data-max="8">`,
		`<b>three ready replicas (2/2 points)</b></td><td><span class="status passed">`,
		`<b>one per node (0/3 points)</b><pre>lost 3 of 3 points` + "\nexpected: ",
		"observed: len(uniq(map(pods(&#34;app=web&#34;), .node))) = 1\nhint: Look at anti-affinity.</pre>",
		"lost 1 of 1 points\nexpected: `kubectl auth can-i delete pods` to fail",
		"lost 2 of 2 points\nnot run: the exercise&#39;s time limit of 5m0s was reached\nhint: h4",
		"debug.yaml:1:1: Pod default/debug: refused (privileged)",
		"web.yaml:20: Service default/web: rejected by the API server: Service &#34;web&#34; is invalid",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", html)
	}
}

func TestGradeResultStatus(t *testing.T) {
	for _, c := range []struct {
		status string
		passed bool
		want   engine.Status
	}{{StatusGraded, true, engine.Passed}, {StatusGraded, false, engine.Failed}, {StatusRefused, false, "refused"}, {StatusError, false, engine.Errored}} {
		g := &Grade{Exercise: "x", Status: c.status, Passed: c.passed}
		if got := g.Result().Status; got != c.want {
			t.Errorf("grade %s (passed %v): result %s, want %s", c.status, c.passed, got, c.want)
		}
	}
}
