package app_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"kubelab.dev/kubelab/internal/syncbuf"
	"kubelab.dev/kubelab/internal/testbin"
)

// repoRoot is the module root, where the drills' relative paths start.
func repoRoot() string {
	root, err := testbin.Root()
	if err != nil {
		panic(err)
	}
	return root
}

// TestDrillInteractive runs `kubelab drill` on a pseudo-terminal as a
// learner would: it waits for the prompt, types an answer, and checks
// that the question, the cluster's timeline, the typed answer and the
// model answer are all shown.
func TestDrillInteractive(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	if testing.Short() {
		t.Skip("boots a real cluster; skipped with -short")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "drill", "features/etcd-leader.feature", "--home", t.TempDir())
	cmd.Dir = repoRoot()
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	out := &syncbuf.Buffer{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, term); close(copied) }()

	if !waitFor(ctx, out, "Your answer (") {
		t.Fatalf("no prompt for an answer; output so far:\n%s", out)
	}
	const answer = "A follower times out and wins an election in a higher term."
	if _, err := io.WriteString(term, answer+"\n\n"); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	<-copied // the pty reports EIO once the child is gone
	got := out.String()
	if err != nil {
		t.Fatalf("kubelab drill: %v; output:\n%s", err, got)
	}
	t.Logf("kubelab drill on a terminal:\n%s", got)
	for _, want := range []string{
		"Question:", "What happens when the", // the question
		"Scenario: Kill the leader of a 3-member etcd cluster",
		"booting cluster",                                                           // live progress
		"What the cluster did", "fault        kill: etcd-leader=etcd-", "is leader", // the timeline
		"Recovery times:", "-> new etcd leader (etcd-",
		"Your answer:\r\n  " + answer,
		"Model answer:", "Raft has three roles",
		// The key points, made or missed, with the cluster's evidence.
		"Key points: your answer made 1 of 6",
		"✔ Followers that hear no heartbeat for an election timeout",
		"missed; it takes: majority / 多数, commit / 提交",
		"the cluster: ", "-> new etcd leader (etcd-", "the cluster: raft.leader != etcdBefore.leader = true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; output:\n%s", want, got)
		}
	}
	if i, j := strings.Index(got, "Your answer:\r\n"), strings.Index(got, "Model answer:"); i < 0 || j < i {
		t.Errorf("the learner's answer should come before the model answer")
	}
	if i, j := strings.Index(got, "Your answer ("), strings.Index(got, "Scenario: Kill the leader"); i < 0 || j < i {
		t.Errorf("the scenarios should be shown after the answer (they give half of it away)")
	}
}

// TestDrillWithoutTerminal checks that `kubelab drill` never prompts when
// stdin is not a terminal, and still shows the timeline and model answer.
func TestDrillWithoutTerminal(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	if testing.Short() {
		t.Skip("boots a real cluster; skipped with -short")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	page := filepath.Join(t.TempDir(), "drill.html")
	junit := filepath.Join(t.TempDir(), "drill.xml")
	cmd := exec.CommandContext(ctx, bin, "drill", "features/rbac.feature", "--home", t.TempDir(), "--html", page, "--junit", junit)
	cmd.Dir = repoRoot()
	cmd.Stdin = strings.NewReader("this must not be read as an answer\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubelab drill: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"Question:", "What the cluster did", "▶ I apply:", "Model answer:", "RBAC only allows"} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"Your answer", "this must not be read"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("stdout has %q although stdin is not a terminal:\n%s", unwanted, got)
		}
	}
	if !strings.Contains(stderr.String(), "booting cluster") {
		t.Errorf("no live progress on stderr:\n%s", stderr.String())
	}
	// One section for the one scenario, one step row per Gherkin step.
	html, rows := htmlReport(t, page)
	if n := strings.Count(html, `<section class="lab"`); n != 1 || rows != 9 || strings.Count(html, `<tr class="step" data-status="passed"`) != 9 ||
		!strings.Contains(html, "<b>When I apply:</b>") || !strings.Contains(html, "<b>And the output matches") || !strings.Contains(html, `class="timeline"`) {
		t.Errorf("HTML report: %d sections, %d step rows, want 1 and 9 passed:\n%s", n, rows, html)
	}
	// kubelab's JUnit model: a suite for the scenario, a testcase per step,
	// classed under the feature.
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != 9 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 9 ||
		!strings.HasPrefix(doc.Suites[0].Cases[0].Classname, "rbac/") || !strings.HasPrefix(doc.Suites[0].Cases[0].Name, "Given ") {
		t.Errorf("JUnit report (%v): want 1 suite of 9 steps classed rbac/...:\n%s", err, b)
	}
}

// TestDrillRejectsUndefinedSteps checks that a drill with a misspelt step
// fails before any cluster boots, naming the closest phrases.
func TestDrillRejectsUndefinedSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the kubelab binary; skipped with -short")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "drill", "features/testdata/undefined.feature", "--no-prompt", "--home", t.TempDir())
	cmd.Dir = repoRoot()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("kubelab drill of an undefined step: %v, want a failure; output:\n%s", err, out)
	}
	for _, want := range []string{`"I kil the etcd leader" matches no phrase`, "When I kill|stop|start|restart|pause|resume the etcd leader"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("booting cluster")) {
		t.Errorf("a cluster was booted for a drill that cannot run:\n%s", out)
	}
}

// waitFor polls until the output s contains want or ctx ends.
func waitFor(ctx context.Context, s *syncbuf.Buffer, want string) bool {
	for !strings.Contains(s.String(), want) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}
