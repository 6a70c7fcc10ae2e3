package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
	"kubelab.dev/kubelab/cmd/kubelab/app"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/internal/syncbuf"
)

// The command line on fake clusters (clustertest and assertionstest):
// what a command prints, writes and exits with, without booting anything.

// fakeHome is a kubelab home whose clusters are fakes showing the
// objects of fc: every backend a command makes, and every running cluster
// it attaches to by name (the last one made with that name).
type fakeHome struct {
	fc   *enginetest.FakeCluster
	home string
	// existing makes every cluster one kubelab did not make: nothing
	// beyond its API (a kubeconfig backend's).
	existing bool

	mu      sync.Mutex
	running map[string]cluster.Backend
}

// dirFake is a fake cluster with a state directory, as the real backends
// have (live exercises are recorded there).
type dirFake struct {
	*clustertest.Fake
	dir string
}

func (d dirFake) Dir() string { return d.dir }

// existingDir is a dirFake that, as a cluster kubelab did not make, can
// do nothing beyond its API.
type existingDir struct{ dirFake }

// Capabilities implements cluster.Capable: none.
func (existingDir) Capabilities() []cluster.Capability { return nil }

func newFakeHome(t *testing.T, s assertionstest.State) *fakeHome {
	_, fc := enginetest.Fake(t, s)
	return &fakeHome{fc: fc, home: t.TempDir(), running: map[string]cluster.Backend{}}
}

// hooks are the fake home's replacements of the backends, for app.RunWith.
func (h *fakeHome) hooks() app.Hooks {
	backend := func(_ string, t cluster.Topology) (cluster.Backend, error) {
		b, err := h.fc.Backend(t)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(h.home, "fake", t.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var d cluster.Backend = dirFake{b.(*clustertest.Fake), dir}
		if h.existing {
			d = existingDir{d.(dirFake)}
		}
		h.mu.Lock()
		h.running[t.Name] = d
		h.mu.Unlock()
		return d, nil
	}
	open := func(_ context.Context, name string) (cluster.Backend, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if b, ok := h.running[name]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("no fake cluster %q", name)
	}
	return app.Hooks{Backend: backend, Open: open, Observe: h.fc.Observe}
}

// run runs the command line in this process on the fake home.
func (h *fakeHome) run(ctx context.Context, args ...string) (string, int) {
	var out syncbuf.Buffer
	err := app.RunWith(ctx, app.Streams{In: strings.NewReader(""), Out: &out, Err: &out}, append([]string{"--home", h.home}, args...), h.hooks())
	if err != nil {
		fmt.Fprintf(&out, "kubelab: %v\n", err)
	}
	return out.String(), app.ExitCode(err)
}

func writeTestFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var oneReadyWorker = assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}}

// TestRunOnAFake: kubelab run of a passing and of a failing lab: the
// summary, the exit code, the JSON report, the cluster removed.
func TestRunOnAFake(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	dir := t.TempDir()
	pass := writeTestFile(t, filepath.Join(dir, "pass.yaml"), `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: scheduler-down, title: The scheduler goes down}
spec:
  steps:
  - name: kill the scheduler
    try:
    - kill: {target: kube-scheduler-1}
    - assert: {expr: 'component("kube-scheduler-1").state == "stopped"'}
  - name: the node stays
    try:
    - assert: {expr: 'len(nodes()) == 1 && nodes()[0].ready'}
`)
	fail := writeTestFile(t, filepath.Join(dir, "fail.yaml"), `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: two-nodes, title: Two nodes}
spec:
  steps:
  - name: count the nodes
    try:
    - assert: {expr: 'len(nodes()) == 2'}
`)
	report := filepath.Join(dir, "report.json")
	out, code := h.run(t.Context(), "run", pass, "--json", report)
	if code != app.ExitPassed || !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("a passing lab: exit %d\n%s", code, out)
	}
	if log := h.fc.Log.String(); !strings.Contains(log, "backend: act kill kube-scheduler-1") || !strings.HasSuffix(log, "backend: down") {
		t.Errorf("the fake cluster's log:\n%s\nwant the kill, then the cluster removed", log)
	}
	if got := reportShape(t, report); len(got) != 1 || got[0].Lab != "scheduler-down" || got[0].Status != "passed" ||
		!slices.Equal(got[0].Steps, []string{"kill the scheduler=passed", "the node stays=passed"}) {
		t.Errorf("the JSON report: %+v", got)
	}

	out, code = h.run(t.Context(), "run", fail)
	if code != app.ExitFailed || !strings.Contains(out, "0 passed, 1 failed") || !strings.Contains(out, "len(nodes()) = 1") {
		t.Errorf("a failing lab: exit %d\n%s\nwant exit %d, the summary and the value observed", code, out, app.ExitFailed)
	}
}

// TestRunNothingCanRun: labs that reach containers or look inside nodes,
// on a backend whose nodes are simulated, are each skipped with the
// reason before anything boots; a run in which every lab was skipped has
// not passed (exit 2), while one that ran a lab beside them counts that
// lab.
func TestRunNothingCanRun(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	dir := t.TempDir()
	// oneOp is a lab of one step of one operation.
	oneOp := func(name, op string) string {
		return writeTestFile(t, filepath.Join(dir, name+".yaml"), "apiVersion: kubelab.dev/v1alpha1\nkind: Lab\n"+
			"metadata: {name: "+name+", title: "+name+"}\nspec:\n  steps:\n  - name: s\n    try:\n    - "+op+"\n")
	}
	logs := oneOp("read-logs", `script: {command: "echo first\n$KUBECTL logs web"}`)
	cri := oneOp("sandboxes", `assert: {expr: 'len(cri("worker-1").sandboxes) > 0'}`)
	nodes := oneOp("one-node", `assert: {expr: 'len(nodes()) == 1'}`)
	out, code := h.run(t.Context(), "run", logs, cri)
	if code != app.ExitInvalid || !strings.Contains(out, "none of the 2 labs can run on the embedded backend") ||
		!strings.Contains(out, "lacks containers (script echo first …") || !strings.Contains(out, "— SKIPPED\n   lab sandboxes:") ||
		strings.Contains(out, "cluster up in") {
		t.Errorf("two labs the backend cannot run: exit %d\n%s\nwant exit %d, each skipped with its reason, no cluster", code, out, app.ExitInvalid)
	}
	if log := h.fc.Log.String(); strings.Contains(log, "backend: up") {
		t.Errorf("the fake cluster's log:\n%s\nwant nothing booted", log)
	}
	out, code = h.run(t.Context(), "run", logs, nodes)
	if code != app.ExitPassed || !strings.Contains(out, "1 passed, 0 failed, 1 skipped") {
		t.Errorf("a lab beside one the backend cannot run: exit %d\n%s\nwant exit 0, one passed and one skipped", code, out)
	}
}

// webExercise and webPods are enginetest's fixtures.
const webExercise = enginetest.WebExercise

var webPods = enginetest.WebPods

// TestGradeOnAFake: kubelab grade of one submission prints the score and
// each lost point with its reason, and exits failed below the passing
// score.
func TestGradeOnAFake(t *testing.T) {
	h := newFakeHome(t, webPods(1))
	ex := writeTestFile(t, filepath.Join(t.TempDir(), "web", "exercise.yaml"), webExercise)
	sub := filepath.Dir(writeTestFile(t, filepath.Join(t.TempDir(), "ada", "web.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"))
	out, code := h.run(t.Context(), "grade", filepath.Dir(ex), "--submission", sub)
	if code != app.ExitFailed || !strings.Contains(out, "1/3") || !strings.Contains(out, "two web pods run") || !strings.Contains(out, "scale it to two") {
		t.Errorf("exit %d\n%s\nwant exit %d, score 1/3, the failed check with its hint", code, out, app.ExitFailed)
	}
	if log := h.fc.Log.String(); strings.Count(log, "backend: up") != 1 || !strings.HasSuffix(log, "backend: down") {
		t.Errorf("the fake clusters' log:\n%s\nwant one cluster booted, and removed after grading", log)
	}
}

// TestLiveLoopOnAFake: exercise start, then check --watch, which shows
// the checks as they are, re-evaluates when the cluster changes, and
// stops at full marks naming what comes next.
func TestLiveLoopOnAFake(t *testing.T) {
	h := newFakeHome(t, webPods(0))
	ex := filepath.Dir(writeTestFile(t, filepath.Join(t.TempDir(), "web", "exercise.yaml"), webExercise))
	out, code := h.run(t.Context(), "exercise", "start", ex, "--name", "live")
	if code != app.ExitPassed || !strings.Contains(out, "Run the web pods") {
		t.Fatalf("exercise start: exit %d\n%s", code, out)
	}
	out, code = h.run(t.Context(), "check", "--name", "live")
	if code != app.ExitFailed || !strings.Contains(out, "0/3") {
		t.Errorf("check before any work: exit %d\n%s\nwant 0/3", code, out)
	}
	if out, code := h.run(t.Context(), "solve", "--name", "live", "--mistake", "delete-it"); code != app.ExitInvalid || !strings.Contains(out, "documents no mistake (spec.mistakes)") {
		t.Errorf("solve --mistake of an exercise without mistakes: exit %d\n%s\nwant exit 2 saying it documents none", code, out)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	var watchOut string
	go func() {
		defer close(done)
		watchOut, code = h.run(ctx, "check", "--watch", "--name", "live")
	}()
	// The learner's work arrives in two changes: one pod, then two.
	time.Sleep(300 * time.Millisecond)
	h.fc.Set(webPods(1))
	time.Sleep(300 * time.Millisecond)
	h.fc.Set(webPods(2))
	<-done
	if code != app.ExitPassed || !strings.Contains(watchOut, "3/3") || !strings.Contains(watchOut, "kubelab check --final") {
		t.Errorf("check --watch: exit %d\n%s\nwant it to end at 3/3 with the next command", code, watchOut)
	}
	if ctx.Err() != nil {
		t.Errorf("check --watch did not end at full marks: %v", ctx.Err())
	}
}

// TestDrillScoresTheAnswerOnAFake: kubelab drill with --answer-file asks
// nothing, shows the question before the scenarios, runs them, and scores
// the answer against the key points with what the cluster showed of each;
// the JSON and HTML reports carry the same.
func TestDrillScoresTheAnswerOnAFake(t *testing.T) {
	h := newFakeHome(t, webPods(2))
	dir := t.TempDir()
	feature := writeTestFile(t, filepath.Join(dir, "scheduler-down.feature"), `Feature: The scheduler goes down
  Question: What keeps running when the scheduler dies?

  Model answer:
    Bound pods keep running: the kubelet runs them. New pods stay Pending
    until a scheduler leads again.

  Key points:
    - Bound pods keep running, the kubelet runs them.
      terms: keep running, 继续运行 | kubelet
    - New pods stay Pending.
      terms: pending, 挂起
      evidence: component("kube-scheduler-1").state
    - A standby takes over the lease.
      terms: lease, 租约
      evidence: timeline fault

  Scenario: Kill the scheduler
    Given a lab cluster with 2 schedulers
    When I kill "kube-scheduler-1"
    Then 2 pods labelled "app=web" are Running
`)
	answer := writeTestFile(t, filepath.Join(dir, "answer.txt"), "调度器挂了以后，已经绑定的 Pod 继续运行，因为 kubelet 在跑它们。New pods are Pending.\n")
	js, page := filepath.Join(dir, "drill.json"), filepath.Join(dir, "drill.html")
	out, code := h.run(t.Context(), "drill", feature, "--answer-file", answer, "--json", js, "--html", page)
	if code != app.ExitPassed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	q, s := strings.Index(out, "What keeps running"), strings.Index(out, "Scenario: Kill the scheduler")
	if q < 0 || s < q {
		t.Errorf("the question must come before the scenarios:\n%s", out)
	}
	for _, want := range []string{
		"Key points: your answer made 2 of 3",
		"✔ Bound pods keep running, the kubelet runs them.",
		`you said: "调度器挂了以后，已经绑定的 Pod 继续运行，因为 kubelet 在跑它们"`,
		`the cluster: component("kube-scheduler-1").state = "stopped"`,
		"✘ A standby takes over the lease.",
		"missed; it takes: lease",
		"the cluster: 0.0s kill: kube-scheduler-1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Drill *struct {
				Question  string `json:"question"`
				Answer    string `json:"answer"`
				KeyPoints []struct {
					Point string `json:"point"`
					Made  bool   `json:"made"`
				} `json:"keyPoints"`
			} `json:"drill"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Drill == nil || len(rep.Results[0].Drill.KeyPoints) != 3 || !rep.Results[0].Drill.KeyPoints[0].Made || rep.Results[0].Drill.KeyPoints[2].Made {
		t.Errorf("the JSON report's drill:\n%s", data)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(html), `class="keypoint"`) != 3 || !strings.Contains(string(html), "New pods are Pending.") {
		t.Errorf("the HTML report lacks the key points or the answer")
	}
}

// TestInterviewOnAFake runs drill --interview on a pseudo-terminal, its
// drills on fake clusters: three questions of three topics come one by
// one, each against the clock (the third is left to run out, and the line
// typed before counts), then the scores, the weakest topics and a saved
// session that --history shows.
func TestInterviewOnAFake(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer tty.Close()
	go func() { _, _ = io.Copy(io.Discard, master) }() // the terminal's echo

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- app.RunWith(ctx, app.Streams{In: tty, Out: &out, Err: &out},
			[]string{"--home", h.home, "drill", "--interview", "--topic", "rbac,admission,watch", "--count", "3", "--time", "3s", "--seed", "7"},
			h.hooks())
	}()
	answers := map[string]string{
		"(rbac, 3s)":      "Authentication says who you are, authorization with RBAC what you may do. A Role and a RoleBinding to the ServiceAccount.",
		"(admission, 3s)": "A ValidatingAdmissionPolicy with a CEL expression and its binding.",
	}
	for q := 1; q <= 3; q++ {
		header := fmt.Sprintf("Question %d/3", q)
		if !waitFor(ctx, &out, header) {
			t.Fatalf("no %q:\n%s", header, out.String())
		}
		time.Sleep(100 * time.Millisecond)
		text := out.String()[strings.LastIndex(out.String(), header):]
		typed := "Clients list, then watch from the resourceVersion." // the last one: no empty line, the clock ends it
		for k, a := range answers {
			if strings.Contains(text, k) {
				typed = a + "\n"
			}
		}
		if _, err := io.WriteString(master, typed+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("drill --interview: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"Interview: 3 questions, 3s each",
		"(rbac, 3s)", "(admission, 3s)", "(watch, 3s)",
		"━━ Summary", "QUESTION", "KEY POINTS",
		// authentication and authorization; a RoleBinding to the ServiceAccount
		// (a Role without its verbs is not the point)
		"RBAC: who may do what                  rbac       2/5",
		"Total: 4 of 14 key points (29%)", "Weakest topics: admission (1/5), watch (1/4), rbac (2/5)",
		"session saved: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "(time is up)") && !strings.Contains(got, "(time up)") {
		t.Errorf("the unanswered question's clock did not run out:\n%s", got)
	}
	hist, code := h.run(t.Context(), "drill", "--history")
	if code != 0 || !strings.Contains(hist, "SESSION") || strings.Count(hist, "\n") < 4 || !strings.Contains(hist, "rbac") {
		t.Errorf("drill --history: exit %d\n%s", code, hist)
	}
}

// TestUIOnAFake: kubelab ui EXERCISE starts the exercise on a fake
// cluster, prints a URL with a token that opens the page, and Ctrl-C
// stops it and removes the cluster it started.
func TestUIOnAFake(t *testing.T) {
	h := newFakeHome(t, webPods(1))
	ex := filepath.Dir(writeTestFile(t, filepath.Join(t.TempDir(), "web", "exercise.yaml"), webExercise))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- app.RunWith(ctx, app.Streams{In: strings.NewReader(""), Out: &out, Err: &out},
			[]string{"--home", h.home, "ui", ex, "--name", "web-ui", "--no-browser"}, h.hooks())
	}()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if !waitFor(wctx, &out, "?token=") {
		t.Fatalf("no URL:\n%s", out.String())
	}
	line := out.String()[strings.Index(out.String(), "http://"):]
	url := strings.TrimSpace(line[:strings.Index(line, "\n")])
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Run the web pods") || !strings.Contains(string(page), "two web pods run") {
		t.Errorf("the page (%d):\n%s", resp.StatusCode, page)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ui after Ctrl-C: %v, want its normal end\n%s", err, out.String())
	}
	if log := h.fc.Log.String(); !strings.HasSuffix(log, "backend: down") {
		t.Errorf("the cluster ui started was not removed:\n%s", log)
	}
}

// TestEvalOnAFake: kubelab eval prints one value alone, several as
// EXPRESSION = VALUE lines, -o json as one object keyed by expression
// with the names expressions use; a typo is refused, with the field meant,
// before the cluster is read; --watch prints what changed, until Ctrl-C.
func TestEvalOnAFake(t *testing.T) {
	state := func(pods int) assertionstest.State {
		s := webPods(pods)
		s.Raft = assertions.Raft{Leader: "etcd-2", HasLeader: true, Term: 3}
		s.Metrics = map[string]string{"etcd-2": "# TYPE etcd_server_is_leader gauge\netcd_server_is_leader 1\n"}
		return s
	}
	h := newFakeHome(t, state(0))
	if out, code := h.run(t.Context(), "up", "--name", "e"); code != app.ExitPassed {
		t.Fatalf("up: exit %d\n%s", code, out)
	}
	// The name is taken: a second cluster under it, of any backend or
	// command, is refused before it is made (its failed boot would remove
	// the first one's state).
	for _, args := range [][]string{{"up", "--name", "e"}, {"up", "--name", "e", "--backend", "docker"}, {"ui", "--name", "e", "../../../labs/02-etcd-leader-failover.yaml"}} {
		if out, code := h.run(t.Context(), args...); code != app.ExitInvalid || !strings.Contains(out, `cluster "e": already exists on the`) {
			t.Errorf("kubelab %s: exit %d\n%s\nwant exit 2 saying the cluster exists", strings.Join(args, " "), code, out)
		}
	}
	if out, code := h.run(t.Context(), "eval", "--name", "e", "raft.leader"); code != app.ExitPassed || out != "\"etcd-2\"\n" {
		t.Errorf("eval raft.leader: exit %d, %q", code, out)
	}
	if out, code := h.run(t.Context(), "eval", "--name", "e", "raft.term", `len(pods("app=web"))`); code != app.ExitPassed || out != "raft.term = 3\nlen(pods(\"app=web\")) = 0\n" {
		t.Errorf("eval of two: exit %d, %q", code, out)
	}
	out, code := h.run(t.Context(), "eval", "--name", "e", "raft", "-o", "json")
	var got map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &got); code != app.ExitPassed || err != nil || got["raft"]["leader"] != "etcd-2" || got["raft"]["hasLeader"] != true {
		t.Errorf("eval -o json: exit %d, %v\n%s", code, err, out)
	}
	if out, code := h.run(t.Context(), "eval", "--name", "e", `metric(raft.leader, "etcd_server_is_leader")`); code != app.ExitPassed || out != "1\n" {
		t.Errorf("eval of a metric: exit %d, %q", code, out)
	}
	if out, code := h.run(t.Context(), "eval", "--name", "e", `metric("etcd-2", "etcd_server_is_leadr") == 0`); code == app.ExitPassed || !strings.Contains(out, `metric("etcd-2", "etcd_server_is_leadr") failed: etcd-2 has no metric etcd_server_is_leadr`) || !strings.Contains(out, `did you mean "etcd_server_is_leader"`) {
		t.Errorf("eval of a metric the component lacks: exit %d\n%s\nwant the failed lookup, not its zero value", code, out)
	}
	if out, code := h.run(t.Context(), "eval", "--name", "nobody", "raft.leadr"); code != app.ExitInvalid || !strings.Contains(out, `did you mean "leader"`) {
		t.Errorf("eval of a typo: exit %d\n%s\nwant exit 2 naming the field, before looking for the cluster", code, out)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	var watchOut string
	go func() {
		defer close(done)
		watchOut, code = h.run(ctx, "eval", "--name", "e", "--watch", `len(pods("app=web"))`, "raft.term")
	}()
	time.Sleep(300 * time.Millisecond)
	h.fc.Set(state(2))
	time.Sleep(3 * time.Second) // the change, then the debounce, on a busy machine
	cancel()
	<-done
	if code != app.ExitPassed || !strings.Contains(watchOut, `len(pods("app=web")) = 0`) || !strings.Contains(watchOut, `len(pods("app=web")) = 2`) || strings.Count(watchOut, "raft.term") != 1 {
		t.Errorf("eval --watch: exit %d\n%s\nwant the pods' count before and after, raft.term once", code, watchOut)
	}
}

// TestDrillNothingCanRun: a drill whose every scenario needs what the
// backend lacks shows each as SKIPPED with the reason, and exits 2: it
// has not passed.
func TestDrillNothingCanRun(t *testing.T) {
	h := newFakeHome(t, oneReadyWorker)
	h.existing = true
	drill := writeTestFile(t, filepath.Join(t.TempDir(), "kill.feature"), `Feature: kill
  Question: What happens when the scheduler dies?

  Model answer:
    Bound pods keep running.

  Scenario: The scheduler is killed
    Given a lab cluster
    When I kill "kube-scheduler-1"
    Then node "worker-1" is Ready
`)
	out, code := h.run(t.Context(), "drill", drill, "--no-prompt")
	if code != app.ExitInvalid || !strings.Contains(out, "(SKIPPED in") || !strings.Contains(out, "lacks component-faults") ||
		!strings.Contains(out, "none of the 1 scenarios can run") || strings.Contains(out, "act kill") {
		t.Errorf("exit %d\n%s\nwant exit %d, the scenario skipped with its reason", code, out, app.ExitInvalid)
	}
}
