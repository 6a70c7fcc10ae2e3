package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/observe"
	"kubelab.dev/kubelab/ui"
)

const exercise = enginetest.WebExercise

var webPods = enginetest.WebPods

// serve starts the view of the exercise on a fake cluster showing one
// web pod, and returns its address and the fake.
func serve(t testing.TB) (string, *enginetest.FakeCluster) {
	t.Helper()
	return serveWith(t, serveOpts{every: time.Minute})
}

// serveIn is serve with the page in p's language.
func serveIn(t testing.TB, p *i18n.Printer) (string, *enginetest.FakeCluster) {
	t.Helper()
	return serveWith(t, serveOpts{words: p, every: time.Minute})
}

// serveEvery is serve re-evaluating at least every d.
func serveEvery(t testing.TB, d time.Duration) (string, *enginetest.FakeCluster) {
	t.Helper()
	return serveWith(t, serveOpts{every: d})
}

// serveOpts vary the served view: its language, how often it
// re-evaluates, whether its nodes are real (with what they show inside).
type serveOpts struct {
	words *i18n.Printer
	every time.Duration
	nodes bool
	// existing serves a cluster with no capability (the kubeconfig backend).
	existing bool
	reset    func(ctx context.Context) (*engine.Session, error)
	// lab, when set, is a lab file the page runs instead of the exercise.
	lab string
}

func serveWith(t testing.TB, o serveOpts) (string, *enginetest.FakeCluster) {
	t.Helper()
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(exercise))
	if err != nil {
		t.Fatal(err)
	}
	state := webPods(1)
	state.Scheduling = []assertions.Scheduling{{Decision: observe.Decision{
		Time: time.Now(), Pod: "default/web-a", Profile: "default-scheduler", Result: "Scheduled", Selected: "worker-1",
		Filtered: map[string]observe.Rejection{"worker-2": {Plugin: "TaintToleration", Reason: "node(s) had untolerated taint {dedicated: db}"}},
		Feasible: []string{"worker-1"},
	}, Found: true}}
	state.Metrics = map[string]string{
		"etcd-1":           "# TYPE etcd_server_is_leader gauge\netcd_server_is_leader 1\n# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total 1\n",
		"kube-apiserver-1": "# TYPE apiserver_request_total counter\napiserver_request_total{code=\"201\",verb=\"POST\"} 40\napiserver_request_total{code=\"422\",verb=\"POST\"} 2\n",
	}
	if o.nodes {
		state.CRI = map[string]assertions.CRI{"worker-1": {
			Sandboxes:  []observe.Sandbox{{ID: "sb1", Pod: "web-a", Namespace: "default", State: "SANDBOX_READY", Image: "kubelab/pause:dev", IP: "10.244.1.5", PID: 4242}},
			Containers: []observe.CRIContainer{{ID: "c1", Name: "web", Pod: "web-a", SandboxID: "sb1", State: "CONTAINER_RUNNING", PID: 4250}},
		}}
		state.IPTables = map[string]assertions.IPTables{"worker-1": {Services: map[string]observe.ProxiedService{
			"default/web:": {Chain: "KUBE-SVC-ABC", ClusterIP: "10.96.0.20", Endpoints: []string{"10.244.1.5:8080"}, SEPs: []string{"KUBE-SEP-XYZ"}},
		}}}
	}
	r, fc := enginetest.Fake(t, state)
	fc.NodeInternals, fc.Existing = o.nodes, o.existing
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	topo := ex.Topology()
	record := true // the scheduler's panel
	topo.Scheduler.Record = &record
	needs := ex.Needs()
	var lab *load.Lab
	if o.lab != "" {
		if lab, err = load.ParseLab("lab.yaml", []byte(o.lab)); err != nil {
			t.Fatal(err)
		}
		topo, needs, ex = lab.Spec.Cluster, lab.Needs(), nil
	}
	sess, err := r.StartFor(ctx, "web-live", topo, needs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sess.Close(context.WithoutCancel(ctx), false) })
	uo := ui.Options{Exercise: ex, Session: sess, Token: "s3cret", Patience: 200 * time.Millisecond, Every: o.every, Words: o.words, Reset: o.reset}
	if lab != nil {
		uo.Lab = &ui.LabRun{Lab: lab, Steps: sess.Steps(lab)}
	}
	srv, err := ui.New(uo)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + ln.Addr().String() + "/?token=s3cret"; srv.URL() != want {
		t.Errorf("URL %s, want %s", srv.URL(), want)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), fc
}

// get sends a request without following redirects.
func get(t *testing.T, method, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestRefusals: no token, a wrong one (in the URL or the cookie), another
// Host (DNS rebinding), another Origin, an unknown path; no CORS.
func TestRefusals(t *testing.T) {
	addr, _ := serve(t)
	base := "http://" + addr
	good := map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret"}
	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		code               int
	}{
		{"no token", "GET", "/", nil, http.StatusUnauthorized},
		{"no token on the stream", "GET", "/events", nil, http.StatusUnauthorized},
		{"no token for an action", "POST", "/final", nil, http.StatusUnauthorized},
		{"wrong token", "GET", "/?token=guess", nil, http.StatusForbidden},
		{"wrong cookie", "GET", "/", map[string]string{"Cookie": ui.CookieName(addr) + "=guess"}, http.StatusForbidden},
		{"another host", "GET", "/", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Host": "attacker.example:80"}, http.StatusForbidden},
		{"another origin on the stream", "GET", "/events", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://attacker.example"}, http.StatusForbidden},
		{"another origin for an action", "POST", "/final", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://attacker.example"}, http.StatusForbidden},
		{"unknown path", "GET", "/etc/passwd", good, http.StatusNotFound},
		{"a page by another method", "DELETE", "/", good, http.StatusMethodNotAllowed},
	} {
		resp, body := get(t, tc.method, base+tc.path, tc.header)
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, body, tc.code)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: CORS header %q", tc.name, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}

	resp, _ := get(t, "GET", base+"/?token=s3cret", nil)
	c := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(c) != 1 || c[0].Value != "s3cret" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("the token: %d to %q, cookies %+v; want a redirect to / with an HttpOnly SameSite=Strict cookie", resp.StatusCode, resp.Header.Get("Location"), c)
	}
	resp, page := get(t, "GET", base+"/", good)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "<h1>Run the web pods</h1>") || !strings.Contains(page, "<strong>two</strong>") ||
		strings.Contains(page, `<script>alert("x")`) || !strings.Contains(page, "scale it to two") {
		t.Errorf("the page (%d): want the statement as HTML, its script dropped, the hints:\n%s", resp.StatusCode, page)
	}
}

// TestChecksTurnGreenLive: the event stream sends the checks as they are,
// then again when the cluster changes, and a final check on request.
func TestChecksTurnGreenLive(t *testing.T) {
	addr, fc := serve(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	next := events(t, ctx, addr)
	ev := next()
	if ev.Score != 1 || ev.Max != 3 || len(ev.Checks) != 2 || ev.Checks[1].Status != "failed" || !strings.Contains(ev.Checks[1].Observed, `len(pods("app=web")) = 1`) {
		t.Fatalf("first evaluation: %+v", ev)
	}
	fc.Set(webPods(2))
	if ev = next(); ev.Score != 3 || ev.Checks[1].Status != "passed" || ev.Final {
		t.Fatalf("after the change: %+v", ev)
	}
	r, _ := get(t, "POST", "http://"+addr+"/final", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://" + addr})
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("final: %d", r.StatusCode)
	}
	if ev = next(); !ev.Final || ev.Score != 3 {
		t.Errorf("final check: %+v", ev)
	}
}

// TestTerminal: a shell on a PTY behind a WebSocket, with the cluster's
// KUBECONFIG and a kubectl on PATH; it takes keystrokes and sizes, and a
// page that reconnects (a reload) gets its recent output again. Another
// Origin is refused.
func TestTerminal(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(exercise))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := enginetest.Fake(t, webPods(1))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sess, err := r.StartFor(ctx, "web-term", ex.Topology(), ex.Needs())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.WithoutCancel(ctx), false)
	srv, err := ui.New(ui.Options{Exercise: ex, Session: sess, Token: "s3cret", Every: time.Minute, Shell: &ui.Shell{
		Command: []string{"/bin/sh"}, Env: []string{"KUBECONFIG=/lab/admin.kubeconfig", "PS1=$ "},
		Kubectl: []string{"/bin/echo", "kubectl of the lab:"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	if _, _, err := websocket.Dial(ctx, "ws://"+addr+"/term/t1", &websocket.DialOptions{HTTPHeader: http.Header{
		"Cookie": {ui.CookieName(addr) + "=s3cret"}, "Origin": {"http://attacker.example"}}}); err == nil {
		t.Error("a WebSocket from another Origin was accepted")
	}
	if _, _, err := websocket.Dial(ctx, "ws://"+addr+"/term/t1", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + addr}}}); err == nil {
		t.Error("a WebSocket without the token was accepted")
	}
	dial := func() *websocket.Conn {
		t.Helper()
		c, _, err := websocket.Dial(ctx, "ws://"+addr+"/term/t1", &websocket.DialOptions{HTTPHeader: http.Header{
			"Cookie": {ui.CookieName(addr) + "=s3cret"}, "Origin": {"http://" + addr}}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// readUntil reads output until it holds want.
	readUntil := func(c *websocket.Conn, want string) string {
		t.Helper()
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		var got strings.Builder
		for !strings.Contains(got.String(), want) {
			_, b, err := c.Read(rctx)
			if err != nil {
				t.Fatalf("reading for %q: %v; got:\n%s", want, err, got.String())
			}
			got.Write(b)
		}
		return got.String()
	}
	send := func(c *websocket.Conn, m map[string]any) {
		t.Helper()
		b, _ := json.Marshal(m)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	c := dial()
	send(c, map[string]any{"type": "resize", "cols": 100, "rows": 40})
	send(c, map[string]any{"type": "input", "data": "echo \"cfg=$KUBECONFIG\"; stty size; kubectl get pods\n"})
	out := readUntil(c, "kubectl of the lab: get pods")
	if !strings.Contains(out, "cfg=/lab/admin.kubeconfig") || !strings.Contains(out, "40 100") {
		t.Errorf("the shell's environment or size:\n%s", out)
	}
	c.Close(websocket.StatusNormalClosure, "reload")

	c = dial() // the page again: the shell is the same, its output replayed
	defer c.CloseNow()
	replay := readUntil(c, "cfg=/lab/admin.kubeconfig")
	if !strings.Contains(replay, "kubectl of the lab: get pods") {
		t.Errorf("the reconnected page lacks the earlier output:\n%s", replay)
	}
	send(c, map[string]any{"type": "input", "data": "echo still-$((40+2))\n"})
	readUntil(c, "still-42")
}

// TestMachineryAndFaults: each evaluation carries the machinery (the
// timeline drawn as the report draws it, the faults offered); a fault the
// page offers runs as a lab operation and shows on the timeline (a start
// of a component that runs says so and leaves it be); one it does not
// offer is refused.
func TestMachineryAndFaults(t *testing.T) {
	addr, _ := serve(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	next := events(t, ctx, addr)
	m := next().Machinery
	if !strings.HasPrefix(m.Timeline, `<svg class="timeline"`) {
		t.Errorf("timeline: %.200q", m.Timeline)
	}
	// The control plane's own metrics, each with the expression a lab
	// reads it with; a component that serves none says why.
	metrics := map[string]string{}
	for _, r := range m.Metrics {
		metrics[r.Expr] = r.Value
	}
	for expr, want := range map[string]string{
		`metric("etcd-1", "etcd_server_is_leader")`:                              "1",
		`metric("etcd-1", "etcd_server_leader_changes_seen_total")`:              "1",
		`metric("kube-apiserver-1", "apiserver_request_total")`:                  "42",
		`metric("kube-apiserver-1", "apiserver_request_total", {"code": "422"})`: "2",
	} {
		if metrics[expr] != want {
			t.Errorf("%s = %q, want %s; rows: %+v", expr, metrics[expr], want, m.Metrics)
		}
	}
	if v := metrics[`metric("etcd-1", "etcd_disk_wal_fsync_duration_seconds_count")`]; !strings.HasPrefix(v, "unread: etcd-1 has no metric") {
		t.Errorf("a metric the component does not serve: %q, want it unread with the reason", v)
	}
	offered := map[string]bool{}
	for _, f := range m.Faults {
		offered[f.Kind+" "+f.Target] = true
	}
	if !offered["kill scheduler-leader"] || !offered["start kube-scheduler-1"] || !offered["nodeDown worker-1"] {
		t.Errorf("faults offered: %v", m.Faults)
	}
	// What would change nothing now is offered idle, saying why: every
	// component and node of the fake runs.
	for _, f := range m.Faults {
		idle := f.Kind == "start" || f.Kind == "nodeUp"
		if idle != (f.Idle != "") {
			t.Errorf("fault %s %s: idle %q", f.Kind, f.Target, f.Idle)
		}
	}
	post := func(body string) (int, string) { return postFault(t, ctx, addr, body) }
	if code, body := post(`{"kind": "kill", "target": "load-balancer"}`); code != http.StatusBadRequest {
		t.Errorf("a fault the page does not offer: %d %s", code, body)
	}
	// A start of what runs leaves it be and says so, off the timeline.
	if code, body := post(`{"kind": "start", "target": "kube-scheduler-1"}`); code != http.StatusOK || !strings.Contains(body, `"status":"passed"`) || !strings.Contains(body, "already running") {
		t.Fatalf("start kube-scheduler-1: %d %s", code, body)
	}
	for _, f := range []string{`{"kind": "nodeDown", "target": "worker-1"}`, `{"kind": "nodeUp", "target": "worker-1"}`} {
		if code, body := post(f); code != http.StatusOK || !strings.Contains(body, `"status":"passed"`) {
			t.Fatalf("%s: %d %s", f, code, body)
		}
	}
	for i := 0; i < 5; i++ {
		if m = next().Machinery; strings.Contains(m.Timeline, "start") {
			return
		}
	}
	t.Errorf("the fault is not on the timeline:\n%s", m.Timeline)
}

// postFault asks the page at addr for a fault, as its buttons do, and
// returns the status code and body of the answer.
func postFault(t *testing.T, ctx context.Context, addr, body string) (int, string) {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/fault", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Cookie", ui.CookieName(addr)+"=s3cret")
	r.Header.Set("Origin", "http://"+addr)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// events opens the page's event stream and returns a function that reads
// the next evaluation from it.
func events(t testing.TB, ctx context.Context, addr string) func() ui.Evaluation {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/events", nil)
	req.Header.Set("Cookie", ui.CookieName(addr)+"=s3cret")
	req.Header.Set("Origin", "http://"+addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return func() ui.Evaluation {
		t.Helper()
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev ui.Evaluation
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				return ev
			}
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return ui.Evaluation{}
	}
}

// TestSolveOnAFake: the Solve button's request applies the reference
// solution (here it cannot: the exercise has none, and says so).
func TestSolveOnAFake(t *testing.T) {
	addr, _ := serve(t)
	resp, body := get(t, "POST", "http://"+addr+"/solve", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://" + addr})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "has no reference solution") {
		t.Errorf("solve: %d %s", resp.StatusCode, body)
	}
}

// TestPageInChinese: with --lang zh the page, its script's words and the
// fault buttons are Chinese.
func TestPageInChinese(t *testing.T) {
	addr, _ := serveIn(t, i18n.NewPrinter(i18n.ZH))
	resp, body := get(t, "GET", "http://"+addr+"/", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %s", resp.Status)
	}
	for _, want := range []string{`<html lang="zh">`, "最终检查", "内部机制", "租约持有者", "请求流水线：被拒绝的请求", "还没有被拒绝的请求"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, english := range []string{">Final check<", ">The machinery<", ">Lease holders<"} {
		if strings.Contains(body, english) {
			t.Errorf("the Chinese page says %q", english)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := events(t, ctx, addr)().Machinery
	labels := map[string]string{}
	for _, f := range m.Faults {
		labels[f.Kind+" "+f.Target] = f.Label
	}
	if labels["kill scheduler-leader"] != "杀掉调度器领导者" || labels["nodeDown worker-1"] != "让 worker-1 宕机" {
		t.Errorf("fault buttons: %v", labels)
	}
}

// TestEvaluatesOnlyWhileAPageListens: with no page connected the server
// evaluates nothing, however often it would (Every 50ms); a page that
// connects gets the last evaluation and then a fresh one at once.
func TestEvaluatesOnlyWhileAPageListens(t *testing.T) {
	addr, _ := serveEvery(t, 50*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	connected := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	first := events(t, ctx, addr)()
	if first.At.Before(connected) {
		t.Errorf("an evaluation at %s, before any page listened (%s)", first.At.Format(time.StampMilli), connected.Format(time.StampMilli))
	}
	cancel()
	time.Sleep(time.Second) // several evaluations' worth (each waits 200ms on the failing check), had it gone on
	reconnected := time.Now()
	ctx2, cancel2 := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel2()
	next := events(t, ctx2, addr)
	if last := next(); reconnected.Sub(last.At) < 500*time.Millisecond {
		t.Errorf("the page was away from %s to %s, yet the last evaluation is from %s", connected.Format(time.StampMilli),
			reconnected.Format(time.StampMilli), last.At.Format(time.StampMilli))
	}
	if fresh := next(); fresh.At.Before(reconnected) {
		t.Errorf("no fresh evaluation for the page that came back: %s", fresh.At.Format(time.StampMilli))
	}
}

// TestSchedulerPanel: the machinery carries the scheduler's latest
// decisions drawn as the HTML report draws them: the rejected node with
// the Filter plugin and its reason, the selected node marked.
func TestSchedulerPanel(t *testing.T) {
	addr, _ := serve(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := events(t, ctx, addr)().Machinery
	if len(m.Scheduling) != 1 {
		t.Fatalf("%d decisions drawn, want 1 (notes %v)", len(m.Scheduling), m.Notes)
	}
	for _, want := range []string{`<table class="scheduling"`, "Scheduling default/web-a (default-scheduler): Scheduled on worker-1",
		`<tr class="selected"><td>worker-1 ✔</td>`, "TaintToleration: node(s) had untolerated taint {dedicated: db}"} {
		if !strings.Contains(m.Scheduling[0], want) {
			t.Errorf("the decision lacks %q:\n%s", want, m.Scheduling[0])
		}
	}
}

// TestNodesPanel: on real nodes the machinery carries each node's pod
// sandboxes with their pause process and containers, and each Service as
// kube-proxy routes it; on simulated nodes, a note saying why it is empty.
func TestNodesPanel(t *testing.T) {
	addr, _ := serveWith(t, serveOpts{every: time.Minute, nodes: true})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := events(t, ctx, addr)().Machinery
	if len(m.Nodes) != 1 || m.Nodes[0].Name != "worker-1" {
		t.Fatalf("nodes: %+v (notes %v)", m.Nodes, m.Notes)
	}
	n := m.Nodes[0]
	if len(n.CRI.Sandboxes) != 1 || n.CRI.Sandboxes[0].PID != 4242 || len(n.CRI.Containers) != 1 || n.Error != "" {
		t.Errorf("worker-1's CRI: %+v, error %q", n.CRI, n.Error)
	}
	if sv := n.IPTables.Services["default/web:"]; sv.Chain != "KUBE-SVC-ABC" || len(sv.Endpoints) != 1 {
		t.Errorf("worker-1's services: %+v", n.IPTables.Services)
	}

	addr, _ = serve(t)
	m = events(t, ctx, addr)().Machinery
	if len(m.Nodes) != 0 || !strings.Contains(m.Notes["nodes"], "simulated (kwok)") {
		t.Errorf("simulated nodes: %+v, note %q", m.Nodes, m.Notes["nodes"])
	}
}

// TestPanelsOnAnExistingCluster: on a cluster reached through a
// kubeconfig (no Raft state, faults, audit log, scheduling records or
// node internals), every panel it cannot fill says why instead of
// staying empty, and the timeline is still drawn from the API.
func TestPanelsOnAnExistingCluster(t *testing.T) {
	addr, _ := serveWith(t, serveOpts{every: time.Minute, existing: true})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := events(t, ctx, addr)().Machinery
	for _, panel := range []string{"raft", "faults", "pipeline", "scheduling", "traces", "nodes", "metrics"} {
		if m.Notes[panel] == "" {
			t.Errorf("the %s panel has no note on an existing cluster; notes: %v", panel, m.Notes)
		}
	}
	if m.Raft != nil || len(m.Faults) != 0 || len(m.Refused) != 0 || len(m.Scheduling) != 0 || len(m.Nodes) != 0 || len(m.Metrics) != 0 {
		t.Errorf("panels filled on a cluster that cannot show them: %+v", m)
	}
	if !strings.Contains(m.Timeline, "<svg") {
		t.Errorf("no timeline: %q", m.Timeline)
	}
}

// TestResetOnAFake: the Reset button's request hands the page the new
// session its callback made (a rebooted cluster, set up again), and the
// checks are evaluated there; without a callback there is no Reset.
func TestResetOnAFake(t *testing.T) {
	ex, err := grade.LoadExerciseBytes(t.TempDir()+"/exercise.yaml", []byte(exercise))
	if err != nil {
		t.Fatal(err)
	}
	resets := 0
	addr, _ := serveWith(t, serveOpts{every: time.Minute, reset: func(ctx context.Context) (*engine.Session, error) {
		resets++
		r, _ := enginetest.Fake(t, webPods(2)) // the cluster after the reset shows two pods
		sess, err := r.StartFor(context.WithoutCancel(ctx), "web-live", ex.Topology(), ex.Needs())
		if err == nil {
			t.Cleanup(func() { _, _ = sess.Close(context.Background(), false) })
		}
		return sess, err
	}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	next := events(t, ctx, addr)
	if ev := next(); ev.Score == ev.Max {
		t.Fatalf("before the reset the exercise is already solved: %d/%d", ev.Score, ev.Max)
	}
	resp, body := post(t, addr, "/reset")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"reset"`) || resets != 1 {
		t.Fatalf("POST /reset: %s %s (resets %d)", resp.Status, body, resets)
	}
	for ev := next(); ev.Score != ev.Max; ev = next() {
		if ctx.Err() != nil {
			t.Fatal("no evaluation of the new session")
		}
	}
	addr, _ = serve(t)
	if resp, _ := post(t, addr, "/reset"); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /reset without a Reset callback: %s", resp.Status)
	}
}

// post sends the page's POST to path.
func post(t *testing.T, addr, path string) (*http.Response, string) {
	t.Helper()
	return get(t, "POST", "http://"+addr+path, map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://" + addr})
}

const stepLab = `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: web-steps, title: Web step by step, description: "Count the **web** pods."}
spec:
  steps:
  - name: one web pod
    description: The Deployment has made one pod.
    try:
    - record: {name: before, expr: 'len(pods("app=web"))'}
    - assert: {expr: 'before == 1'}
    - script: {command: 'echo "$0 pod counted"; echo done'}
  - name: two web pods
    try:
    - assert: {expr: 'len(pods("app=web")) == 2'}
  - name: never reached
    try:
    - assert: {expr: 'true'}
  finally:
  - assert: {expr: 'true'}
`

// TestLabStepByStep runs a lab from the page: its steps and operations
// are on the page before anything ran; Next step runs one step and the
// event stream shows it passed, with what its command printed; Run to the end runs the rest (a failed
// check with what it observed, the step after it skipped, the finally
// hook) and ends the lab; then both buttons are refused work.
func TestLabStepByStep(t *testing.T) {
	addr, _ := serveWith(t, serveOpts{every: time.Minute, lab: stepLab})
	resp, page := get(t, "GET", "http://"+addr+"/", map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret"})
	for _, want := range []string{"Web step by step", "<strong>web</strong>", "one web pod", "The Deployment has made one pod.", "before == 1", `id="lab-next"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the lab's page lacks %q (%s)", want, resp.Status)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	next := events(t, ctx, addr)
	if ev := next(); ev.Lab == nil || ev.Lab.Next != 0 || len(ev.Lab.Steps) != 0 {
		t.Fatalf("before any step: %+v", ev.Lab)
	}
	var st ui.LabState
	resp, body := post(t, addr, "/lab/next")
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /lab/next: %s %s", resp.Status, body)
	}
	if st.Next != 1 || len(st.Steps) != 1 || st.Steps[0].Status != engine.Passed || len(st.Steps[0].Ops) != 3 || st.Done {
		t.Fatalf("after Next step: %+v", st)
	}
	// What a command printed is on the page, as in the progress.
	if out := st.Steps[0].Ops[2].Output; !strings.HasSuffix(out, " pod counted\ndone") || st.Steps[0].Ops[1].Output != "" {
		t.Errorf("the script's output: %q; the assert's: %q", out, st.Steps[0].Ops[1].Output)
	}
	for ev := next(); ev.Lab == nil || len(ev.Lab.Steps) != 1; ev = next() {
		if ctx.Err() != nil {
			t.Fatal("the stream never showed the step")
		}
	}
	resp, body = post(t, addr, "/lab/end")
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /lab/end: %s %s", resp.Status, body)
	}
	if !st.Done || st.Status != engine.Failed || len(st.Steps) != 3 || st.Steps[1].Status != engine.Failed || st.Steps[2].Status != engine.Skipped || len(st.Hooks) != 1 {
		t.Fatalf("after Run to the end: %+v", st)
	}
	if obs := st.Steps[1].Ops[0].Observed; len(obs) == 0 || !strings.Contains(obs[0].Expr, "pods(") {
		t.Errorf("the failed check observed %+v", obs)
	}
	resp, body = post(t, addr, "/lab/next")
	if err := json.Unmarshal([]byte(body), &st); err != nil || !st.Done || len(st.Steps) != 3 {
		t.Errorf("Next step after the end: %s %s", resp.Status, body)
	}
}

// TestDrillPage: the drill's page asks its question (and not its
// scenarios' names); a posted answer starts the run, whose progress and
// outcome come on the event stream; a second run while one goes is
// refused; the page's requests pass the same gate as every view.
func TestDrillPage(t *testing.T) {
	release := make(chan struct{})
	var got []string
	srv, err := ui.NewDrill(ui.DrillOptions{Title: "etcd leader", Path: "features/etcd-leader.feature", Question: "What happens when the etcd leader dies?", Token: "s3cret",
		Run: func(ctx context.Context, answer string, answered bool, progress func(string)) (*ui.DrillOutcome, error) {
			got = append(got, answer)
			progress("booting cluster drill-1")
			<-release
			return &ui.DrillOutcome{Passed: true, Answered: answered, Answer: answer, ModelAnswer: "A follower times out and wins an election.",
				KeyPoints: []engine.KeyPointScore{{Point: "a new election", Made: true, By: answer}}, Made: 1,
				Scenarios: []ui.DrillScenario{{Title: "the leader is killed", Passed: true, Seconds: 3.2, Did: "   1.000s      fault etcd-1: killed"}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()
	cookie := map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://" + addr}
	if resp, _ := get(t, "GET", "http://"+addr+"/", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the drill page without the token: %s", resp.Status)
	}
	_, page := get(t, "GET", "http://"+addr+"/", cookie)
	if !strings.Contains(page, "What happens when the etcd leader dies?") || !strings.Contains(page, `id="answer"`) {
		t.Errorf("the page lacks the question or the answer box:\n%s", page)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/events", nil)
	for k, v := range cookie {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func(event string) string {
		t.Helper()
		ev := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				ev = e
			} else if d, ok := strings.CutPrefix(line, "data: "); ok && ev == event {
				return d
			}
		}
		t.Fatalf("no %s event: %v", event, sc.Err())
		return ""
	}
	runIt := func() *http.Response {
		r, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/run", strings.NewReader(`{"answer": "a follower wins a new election"}`))
		for k, v := range cookie {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := runIt(); r.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /run: %s", r.Status)
	}
	if d := next("progress"); d != `"booting cluster drill-1"` {
		t.Errorf("progress %s", d)
	}
	if r := runIt(); r.StatusCode != http.StatusConflict {
		t.Errorf("a second run while one goes: %s", r.Status)
	}
	close(release)
	var out ui.DrillOutcome
	if err := json.Unmarshal([]byte(next("outcome")), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Passed || out.Answer != "a follower wins a new election" || out.Made != 1 || len(out.Scenarios) != 1 || len(got) != 1 {
		t.Errorf("outcome %+v (runs %q)", out, got)
	}
}

// TestHomePage: the course's page lists every topic with its items;
// Start starts only an item of the page and answers with its view's URL;
// Open opens only a cluster of the home; the clusters come as JSON; all
// of it behind the same gate as every view.
func TestHomePage(t *testing.T) {
	var started, opened []string
	h, err := ui.NewHome(ui.HomeOptions{Token: "s3cret",
		Topics: []ui.HomeTopic{
			{ID: "etcd-raft", Title: "etcd Raft", Items: []ui.HomeItem{{Kind: "lab", Path: "labs/02-etcd-leader-failover.yaml", Title: "etcd leader failover"}, {Kind: "drill", Path: "features/etcd-leader.feature", Title: "etcd leader"}}},
			{ID: "cri", Title: "CRI and the pause sandbox", Items: []ui.HomeItem{{Kind: "lab", Path: "labs/docker/cri.yaml", Title: "pause", Docker: true}}},
		},
		Clusters: func(context.Context) ([]ui.HomeCluster, error) {
			return []ui.HomeCluster{{Name: "mine", Backend: "embedded", Status: "5 of 5 components running", Exercise: "fix-pending-pods"}}, nil
		},
		Start: func(_ context.Context, path string) (string, error) {
			started = append(started, path)
			return "http://127.0.0.1:1/?token=view", nil
		},
		Open: func(_ context.Context, name string) (string, error) {
			opened = append(opened, name)
			return "", errors.New("no such view")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := h.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()
	hdr := map[string]string{"Cookie": ui.CookieName(addr) + "=s3cret", "Origin": "http://" + addr}
	if resp, _ := get(t, "GET", "http://"+addr+"/", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the home page without the token: %s", resp.Status)
	}
	_, page := get(t, "GET", "http://"+addr+"/", hdr)
	for _, want := range []string{"1. etcd Raft", "2. CRI and the pause sandbox", `data-path="labs/02-etcd-leader-failover.yaml"`, "etcd leader failover", `title="needs --backend docker"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the home page lacks %q", want)
		}
	}
	send := func(path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("/start", `{"path": "/etc/passwd"}`); code != http.StatusBadRequest || len(started) != 0 {
		t.Errorf("a path the page does not offer: %d %s", code, body)
	}
	if code, body := send("/start", `{"path": "features/etcd-leader.feature"}`); code != http.StatusOK || !strings.Contains(body, `"url":"http://127.0.0.1:1/?token=view"`) {
		t.Errorf("start a drill: %d %s", code, body)
	}
	if code, body := send("/open", `{"name": "theirs"}`); code != http.StatusBadRequest || len(opened) != 0 {
		t.Errorf("a cluster not of the home: %d %s", code, body)
	}
	if code, body := send("/open", `{"name": "mine"}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "no such view") {
		t.Errorf("a view that fails to start: %d %s", code, body)
	}
	_, js := get(t, "GET", "http://"+addr+"/clusters", hdr)
	if !strings.Contains(js, `"exercise":"fix-pending-pods"`) || !strings.Contains(js, `"status":"5 of 5 components running"`) {
		t.Errorf("clusters: %s", js)
	}
	if !slices.Equal(started, []string{"features/etcd-leader.feature"}) || !slices.Equal(opened, []string{"mine"}) {
		t.Errorf("started %q, opened %q", started, opened)
	}
}

// TestStackedNodeFaults: on a stacked topology the page offers each
// control-plane node taken down and brought up whole; bringing up a node
// that runs is idle, and taking one down makes its start the fault to
// press and its kill idle.
func TestStackedNodeFaults(t *testing.T) {
	const lab = `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: stacked, title: Stacked}
spec:
  cluster: {stacked: true, etcd: 3}
  steps:
  - name: s
    try:
    - assert: {expr: 'true'}
`
	addr, _ := serveWith(t, serveOpts{every: time.Minute, lab: lab})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	next := events(t, ctx, addr)
	idle := func(m ui.Machinery) map[string]string {
		out := map[string]string{}
		for _, f := range m.Faults {
			out[f.Kind+" "+f.Target] = f.Idle
		}
		return out
	}
	got := idle(next().Machinery)
	for _, f := range []string{"kill control-plane-1", "start control-plane-1", "kill control-plane-3", "start control-plane-3"} {
		if _, ok := got[f]; !ok {
			t.Errorf("%s not offered: %v", f, got)
		}
	}
	if got["start control-plane-2"] == "" || got["kill control-plane-2"] != "" {
		t.Errorf("a node that runs: start idle %q, kill idle %q", got["start control-plane-2"], got["kill control-plane-2"])
	}
	if code, body := postFault(t, ctx, addr, `{"kind": "kill", "target": "control-plane-2"}`); code != http.StatusOK ||
		!strings.Contains(body, `"status":"passed"`) || !strings.Contains(body, "kube-apiserver-2") {
		t.Fatalf("kill control-plane-2: %d %s", code, body)
	}
	for i := 0; i < 5; i++ {
		if got = idle(next().Machinery); got["start control-plane-2"] == "" && got["kill control-plane-2"] != "" {
			return
		}
	}
	t.Errorf("after the kill: start idle %q, kill idle %q", got["start control-plane-2"], got["kill control-plane-2"])
}
