package ui_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"kubelab.dev/kubelab/curriculum"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/testbin"
)

// chromium finds a headless-capable Chromium (Debian's package).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (apt-get install chromium): the browser test of kubelab ui is skipped")
	return ""
}

// typeText types text into the focused element as text input (what a
// keyboard's characters become), one insertion: chromedp's key events
// reach xterm.js as both a keydown and a keypress, which it would take
// as two keystrokes each.
func typeText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// TestExerciseInChromium is a learner in the browser: kubelab ui starts
// exercises/fix-service-selector on a real cluster; real Chromium opens
// the printed URL, finds the endpoints check failing, types the fix into
// the page's terminal, and sees every check turn green; Reset reboots
// the cluster and the check fails again. With
// KUBELAB_SCREENSHOTS=DIR it saves the page there (docs/ui-exercise.png).
func TestExerciseInChromium(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var stderr strings.Builder
	url := startUI(t, &stderr, "ui", "exercises/fix-service-selector", "--home", t.TempDir(), "--name", "ui-chromium", "--no-browser", "--patience", "2s")
	bctx := browser(t, ctx, 1000)

	endpoints := chromedp.CSS(`.check[data-name="the Service has two ready endpoints"]`)
	err := chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(endpoints),
		chromedp.Poll[chromedp.Void](`document.getElementById("score").dataset.score !== ""`, chromedp.WithPollingTimeout(90*time.Second)),
	)
	if err != nil {
		t.Fatalf("the page: %v\n%s", err, stderr.String())
	}
	st, err := chromedp.Run(bctx, chromedp.AttributeValue(endpoints, "data-status"))
	if err != nil || st.Value != "failed" {
		t.Errorf("before the fix, the endpoints check is %q (%v), want failed", st.Value, err)
	}
	// The fix, typed into the terminal as a learner would.
	err = chromedp.Do(bctx,
		typeInTerminal("kubectl apply -f exercises/fix-service-selector/solution/service.yaml"),
		chromedp.Poll[chromedp.Void](`document.getElementById("score").dataset.score === document.getElementById("score").dataset.max`,
			chromedp.WithPollingTimeout(2*time.Minute)),
	)
	if err != nil {
		score, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#score")))
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify({terminal: typeof Terminal, rows: (document.querySelector(".term.on .xterm-rows") || {}).textContent})`))
		t.Fatalf("after the fix typed in the terminal: %v; score %s; page %s\n%s", err, score, page, stderr.String())
	}
	screenshot(t, bctx, "ui-exercise.png")
	// Reset: the cluster reboots and the exercise is set up again, so the
	// repaired Service is broken again and its check fails anew.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(window.confirm = () => true, true)`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS("#reset")),
		chromedp.Poll[chromedp.Void](`document.getElementById("reset-status").textContent === "the exercise starts again"`, chromedp.WithPollingTimeout(2*time.Minute)),
		chromedp.Poll[chromedp.Void](`document.querySelector('.check[data-name="the Service has two ready endpoints"]').dataset.status === "failed"`, chromedp.WithPollingTimeout(time.Minute)),
	)
	if err != nil {
		status, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#reset-status")))
		t.Fatalf("after Reset: %v; status %q\n%s", err, status, stderr.String())
	}
}

// TestMachineryInChromium: on a cluster of 3 etcd members, kubelab ui
// shows the Raft table; Chromium clicks "kill the etcd leader" and sees
// another member lead and the fault marked on the timeline; a request
// RBAC forbids, typed into the terminal, shows in the pipeline panel
// stopped at authorization, with the RBAC reason; a Deployment created
// there shows its apply trace and the scheduler's decisions. With
// KUBELAB_SCREENSHOTS=DIR it saves the page (docs/ui-machinery.png).
func TestMachineryInChromium(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	chromium(t)
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	home := t.TempDir()
	on := []string{"--home", home, "--name", "ui-machinery"}
	if out, err := exec.Command(bin, append([]string{"up", "--etcd", "3"}, on...)...).CombinedOutput(); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(bin, append([]string{"down"}, on...)...).CombinedOutput(); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	})
	var stderr strings.Builder
	url := startUI(t, &stderr, append([]string{"ui", "--no-browser"}, on...)...)
	bctx := browser(t, ctx, 1300)

	leaderJS := `(() => { const r = Array.from(document.querySelectorAll("#raft tr[data-member]")).find(r => r.cells[1].textContent === "leader"); return r ? r.dataset.member : ""; })()`
	err = chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.Poll[chromedp.Void](leaderJS+` !== ""`, chromedp.WithPollingTimeout(60*time.Second)),
	)
	if err != nil {
		t.Fatalf("the Raft table: %v\n%s", err, stderr.String())
	}
	before, err := chromedp.Run(bctx, chromedp.Evaluate[string](leaderJS))
	if err != nil {
		t.Fatal(err)
	}
	machinery := func() string {
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("machinery").innerText`))
		return page
	}
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`#faults button[data-kind="kill"][data-target="etcd-leader"]`)),
		chromedp.Poll[chromedp.Void](leaderJS+` !== "" && `+leaderJS+` !== "`+before+`"`, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#timeline svg line.marker") !== null`, chromedp.WithPollingTimeout(30*time.Second)),
		// The page says what the fault did; the killed member's start
		// button wakes up, the running members' stay idle.
		chromedp.Poll[chromedp.Void](`document.getElementById("fault-result").textContent.includes("kill etcd-leader=`+before+`")`, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Poll[chromedp.Void](`!document.querySelector('#faults button[data-kind="start"][data-target="`+before+`"]').disabled`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		t.Fatalf("after killing the etcd leader %s: %v\n%s", before, err, machinery())
	}
	// The new leader's own metric says so, as a lab would read it.
	after, err := chromedp.Run(bctx, chromedp.Evaluate[string](leaderJS))
	if err != nil {
		t.Fatal(err)
	}
	isLeaderJS := `(() => { const r = Array.from(document.querySelectorAll("#metrics tr")).find(r => r.cells[1] && r.cells[1].textContent === 'metric("` + after + `", "etcd_server_is_leader")'); return r ? r.cells[2].textContent : ""; })()`
	if err := chromedp.Do(bctx, chromedp.Poll[chromedp.Void](isLeaderJS+` === "1"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		v, _ := chromedp.Run(bctx, chromedp.Evaluate[string](isLeaderJS))
		t.Errorf("the metrics panel: %s's etcd_server_is_leader is %q, want 1 (%v)\n%s", after, v, err, machinery())
	}
	idle, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#faults button[data-kind="start"]:disabled').length`))
	if err != nil || idle < 2 {
		t.Errorf("start buttons of running components: %d disabled (%v), want the 2 running members' and more", idle, err)
	}
	err = chromedp.Do(bctx,
		typeInTerminal("kubectl get secrets --as=system:serviceaccount:default:nobody"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#pipeline .request[data-stage="authorization"]') !== null`, chromedp.WithPollingTimeout(60*time.Second)),
	)
	if err != nil {
		t.Fatalf("the forbidden request in the pipeline: %v\n%s", err, machinery())
	}
	row, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#pipeline .request[data-stage="authorization"]').innerText`))
	if err != nil || !strings.Contains(row, "authorization: refused by RBAC") || !strings.Contains(row, "system:serviceaccount:default:nobody") {
		t.Errorf("the forbidden request's row: %q (%v)", row, err)
	}
	// A Deployment typed into the terminal: its apply trace (a sequence
	// diagram of the writes behind it) and the scheduler's decisions
	// about its pods appear in their panels.
	err = chromedp.Do(bctx,
		typeInTerminal("kubectl create deployment web --image=kubelab/http:dev --replicas=2"),
		chromedp.Poll[chromedp.Void](`(() => { const s = document.querySelector('#trace svg.trace'); return s !== null && Number(s.dataset.hops) >= 4; })()`, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Poll[chromedp.Void](`document.querySelector('#scheduling table.scheduling tr.selected') !== null`, chromedp.WithPollingTimeout(60*time.Second)),
	)
	if err != nil {
		t.Fatalf("the Deployment's trace and scheduling: %v\n%s", err, machinery())
	}
	picked, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("trace-pick").value + " | " + document.querySelector("#scheduling h3").innerText`))
	if err != nil || !strings.Contains(picked, "default/web |") || !strings.Contains(picked, "default/web-") {
		t.Errorf("the trace picked and the decision shown: %q (%v)", picked, err)
	}
	screenshot(t, bctx, "ui-machinery.png")
}

// TestLabInChromium: kubelab ui runs labs/02 step by step on a real
// cluster. Chromium sees every step pending; Next step runs the first
// one alone (it passes, the others wait); Run to the end runs the rest
// and the page says the lab passed, every step and operation green.
func TestLabInChromium(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var stderr strings.Builder
	url := startUI(t, &stderr, "ui", "labs/02-etcd-leader-failover.yaml", "--home", t.TempDir(), "--name", "ui-lab", "--no-browser")
	bctx := browser(t, ctx, 1300)
	statuses := `Array.from(document.querySelectorAll(".lab-step")).map(s => s.dataset.status).join(",")`
	err := chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.Poll[chromedp.Void](`document.getElementById("lab-status").textContent !== ""`, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Click(chromedp.CSS("#lab-next")),
		chromedp.Poll[chromedp.Void](statuses+` === "passed,pending,pending,pending"`, chromedp.WithPollingTimeout(2*time.Minute)),
		chromedp.Click(chromedp.CSS("#lab-end")),
		chromedp.Poll[chromedp.Void](`document.getElementById("lab-status").dataset.status === "passed"`, chromedp.WithPollingTimeout(3*time.Minute)),
	)
	if err != nil {
		got, _ := chromedp.Run(bctx, chromedp.Evaluate[string](statuses+` + " | " + document.getElementById("lab").innerText`))
		t.Fatalf("the lab step by step: %v\n%s\n%s", err, got, stderr.String())
	}
	ops, err := chromedp.Run(bctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".lab-op")).map(o => o.dataset.status).join(",")`))
	if err != nil || strings.Contains(ops, "pending") || strings.Contains(ops, "failed") || ops == "" {
		t.Errorf("the operations after the lab: %q (%v)", ops, err)
	}
	screenshot(t, bctx, "ui-lab.png")
}

// TestDrillInChromium: kubelab ui on features/rbac.feature, in Chinese.
// Chromium reads the question, types an answer that makes some key
// points, runs the drill, sees its progress, then the scenario passed on
// a real cluster, the model answer beside the answer, and each key point
// made or missed.
func TestDrillInChromium(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var stderr strings.Builder
	url := startUI(t, &stderr, "ui", "features/rbac.feature", "--home", t.TempDir(), "--no-browser", "--lang", "zh")
	bctx := browser(t, ctx, 1300)
	err := chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#answer")),
		chromedp.Focus(chromedp.CSS("#answer")),
		typeText("RBAC 只允许，没有拒绝规则。用 Role 列出动词，再用 RoleBinding 绑定到服务账号。"),
		chromedp.Click(chromedp.CSS("#run")),
		chromedp.Poll[chromedp.Void](`document.getElementById("progress").textContent.includes("Role")`, chromedp.WithPollingTimeout(2*time.Minute)),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").dataset.passed !== undefined`, chromedp.WithPollingTimeout(3*time.Minute)),
	)
	if err != nil {
		got, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the drill in the page: %v\n%s\n%s", err, got, stderr.String())
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify({passed: document.getElementById("status").dataset.passed,
		made: document.getElementById("made").textContent, points: Array.from(document.querySelectorAll(".point")).map(p => p.dataset.made).join(","),
		yours: document.getElementById("your-answer").textContent, model: document.getElementById("model-answer").textContent,
		did: document.getElementById("did").innerText})`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"passed":"true"`, `你的回答答到了`, `"points":"`, `true`, `false`, `RoleBinding 绑定到服务账号`, `auth can-i`, `通过`} {
		if !strings.Contains(got, want) {
			t.Errorf("the drill's outcome lacks %q:\n%s", want, got)
		}
	}
	screenshot(t, bctx, "ui-drill.png")
}

// TestHomeInChromium: kubelab ui alone is the course's home page. Chromium
// sees every topic of the course, starts labs/02 from its topic, follows the link to
// the lab's own view (a kubelab ui the home started, on a cluster of its
// own) and sees its steps; the home lists that cluster. Ctrl-C on the
// home stops the view, which removes its cluster: the home is empty.
func TestHomeInChromium(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	chromium(t)
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	home := t.TempDir()
	var stderr strings.Builder
	url, stopUI := startStoppableUI(t, &stderr, "ui", "--home", home, "--no-browser")
	bctx := browser(t, ctx, 1300)
	lab := `.topic[data-topic="etcd-raft"] button.start[data-path$="02-etcd-leader-failover.yaml"]`
	err = chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(lab)),
	)
	if err != nil {
		t.Fatalf("the home page: %v\n%s", err, stderr.String())
	}
	topics, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll(".topic").length`))
	if err != nil || topics != len(curriculum.Topics) {
		t.Errorf("%d topics on the home page (%v), want the course's %d", topics, err, len(curriculum.Topics))
	}
	// The page opens the view's tab at the click (window.open, so no popup
	// blocker stops it); chromedp would hold that new tab paused for its
	// debugger, and the page with it: the test follows the page's link
	// to the view instead.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(window.open = () => null, true)`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(lab)),
		chromedp.Poll[chromedp.Void](`document.querySelector('.item a.view') !== null || document.querySelector('.item .status.error') !== null`, chromedp.WithPollingTimeout(2*time.Minute)),
	)
	if err != nil {
		got, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('.item[data-path$="02-etcd-leader-failover.yaml"]').innerHTML`))
		t.Fatalf("start the lab: %v\n%s\n%s", err, got, stderr.String())
	}
	view, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.querySelector('.item a.view') || {}).href || document.querySelector('.item .status.error').textContent`))
	if err != nil || !strings.HasPrefix(view, "http://127.0.0.1:") {
		t.Fatalf("the lab's view: %q (%v)\n%s", view, err, stderr.String())
	}
	err = chromedp.Do(bctx,
		chromedp.Poll[chromedp.Void](`document.querySelector('#clusters tr[data-cluster="02-etcd-leader-failover"]') !== null`, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Navigate(view),
		chromedp.WaitVisible(chromedp.CSS("#lab-next")),
	)
	if err != nil {
		got, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the cluster in the home and the lab's view: %v\n%s\n%s", err, got, stderr.String())
	}
	steps, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll(".lab-step").length`))
	if err != nil || steps != 4 {
		t.Errorf("the lab's view shows %d steps (%v), want 4", steps, err)
	}
	stopUI()
	out, err := exec.Command(bin, "get", "clusters", "--home", home).CombinedOutput()
	if err != nil || strings.Contains(string(out), "02-etcd-leader-failover") {
		t.Errorf("after Ctrl-C on the home, its clusters: %s (%v)", out, err)
	}
}

// startUI runs the kubelab binary with args (a ui command) from the
// repository's root and returns the URL it prints; the cleanup sends it
// Ctrl-C (its normal end) and checks that it ended well. stderr collects
// what it said.
func startUI(t *testing.T, stderr *strings.Builder, args ...string) string {
	t.Helper()
	url, _ := startStoppableUI(t, stderr, args...)
	return url
}

// startStoppableUI is startUI that also returns the Ctrl-C, to send
// before the test ends (the cleanup then has nothing left to do).
func startStoppableUI(t *testing.T, stderr *strings.Builder, args ...string) (string, func()) {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ui := exec.Command(bin, args...)
	ui.Dir, _ = filepath.Abs("..")
	ui.Env = append(os.Environ(), "SHELL=/bin/sh")
	stdout, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ui.Stderr = stderr
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = ui.Process.Signal(syscall.SIGINT)
			if err := ui.Wait(); err != nil {
				t.Errorf("kubelab ui after Ctrl-C: %v\n%s", err, stderr.String())
			}
		})
	}
	t.Cleanup(stop)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "http://"); i >= 0 {
			go func() {
				for sc.Scan() {
				}
			}()
			return sc.Text()[i:], stop
		}
	}
	once.Do(func() { _ = ui.Wait() })
	t.Fatalf("kubelab ui printed no URL:\n%s", stderr.String())
	return "", stop
}

// browser is a tab of headless Chromium, closed with the test.
func browser(t *testing.T, ctx context.Context, height int) context.Context {
	t.Helper()
	alloc, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, height),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium keeps its profile's singleton socket in a directory of
		// TMPDIR that a killed browser never removes: one of the test's.
		chromedp.Env("TMPDIR="+t.TempDir()))...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(alloc)
	t.Cleanup(bcancel)
	return bctx
}

// typeInTerminal types a command line into the page's terminal.
func typeInTerminal(line string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		chromedp.Click(chromedp.CSS(`.term.on .xterm-screen`)),
		chromedp.Focus(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		typeText(line),
		chromedp.KeyEvent("\r"),
	)
}

// screenshot saves the page as DIR/name with KUBELAB_SCREENSHOTS=DIR.
func screenshot(t *testing.T, bctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("KUBELAB_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPanelsInChromiumOnAFake: the page's script draws the panels the
// server sends (the scheduler's decision table, a real node's sandboxes
// and Service chains) in Chromium, in Chinese with --lang zh, on a fake
// cluster: no cluster boots, so it checks the drawing alone.
func TestPanelsInChromiumOnAFake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	chromium(t)
	addr, _ := serveWith(t, serveOpts{every: time.Minute, nodes: true, words: i18n.NewPrinter(i18n.ZH)})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	bctx := browser(t, ctx, 1300)
	err := chromedp.Do(bctx,
		chromedp.Navigate("http://"+addr+"/?token=s3cret"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#nodes .node[data-node="worker-1"] tr[data-pod="default/web-a"]') !== null`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("machinery").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"节点内部：CRI 沙箱与 kube-proxy 的链", "SANDBOX_READY (kubelab/pause:dev)", "4242", "10.244.1.5", "web running pid 4250",
		"default/web: (10.96.0.20): KUBE-SERVICES → KUBE-SVC-ABC → KUBE-SEP-XYZ → 10.244.1.5:8080",
		"调度器最近的决策", "调度 default/web-a（default-scheduler）：已调度，到 worker-1", "TaintToleration: node(s) had untolerated taint",
		"唯一的可行节点：未打分直接绑定", "此集群不读取 apiserver 的审计日志，因此无法绘制 apply 链路",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the machinery panel lacks %q:\n%s", want, got)
		}
	}
}
