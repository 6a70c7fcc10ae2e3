package ui_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

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
// the page's terminal, and sees every check turn green. With
// KUBELAB_SCREENSHOTS=DIR it saves the page there (docs/ui-exercise.png).
func TestExerciseInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	browser := chromium(t)
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	repo, _ := filepath.Abs("..")
	ui := exec.Command(bin, "ui", "exercises/fix-service-selector", "--home", t.TempDir(), "--name", "ui-chromium", "--no-browser", "--patience", "2s")
	ui.Dir = repo
	ui.Env = append(os.Environ(), "SHELL=/bin/sh")
	stdout, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	ui.Stderr = &stderr
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = ui.Process.Signal(syscall.SIGINT) // its normal end: the cluster is removed
		if err := ui.Wait(); err != nil {
			t.Errorf("kubelab ui after Ctrl-C: %v\n%s", err, stderr.String())
		}
	}
	defer stop()
	url := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "http://"); i >= 0 {
			url = sc.Text()[i:]
			break
		}
	}
	if url == "" {
		t.Fatalf("kubelab ui printed no URL:\n%s", stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	alloc, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(alloc)
	defer bcancel()

	endpoints := chromedp.CSS(`.check[data-name="the Service has two ready endpoints"]`)
	err = chromedp.Do(bctx,
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
		chromedp.WaitVisible(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		chromedp.Click(chromedp.CSS(`.term.on .xterm-screen`)),
		chromedp.Focus(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		typeText("kubectl apply -f exercises/fix-service-selector/solution/service.yaml"),
		chromedp.KeyEvent("\r"),
		chromedp.Poll[chromedp.Void](`document.getElementById("score").dataset.score === document.getElementById("score").dataset.max`,
			chromedp.WithPollingTimeout(2*time.Minute)),
	)
	if err != nil {
		score, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#score")))
		term, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(".term.on")))
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify({terminal: typeof Terminal, fit: typeof FitAddon, terms: document.querySelectorAll(".term").length, rows: (document.querySelector(".term.on .xterm-rows") || {}).textContent})`))
		t.Fatalf("after the fix typed in the terminal: %v; score %s; page %s; terminal:\n%s\n%s", err, score, page, term, stderr.String())
	}
	if dir := os.Getenv("KUBELAB_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ui-exercise.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if strings.Contains(stderr.String(), "removed cluster") == false {
		t.Errorf("kubelab ui did not remove the cluster it started:\n%s", stderr.String())
	}
}

// TestMachineryInChromium: on a cluster of 3 etcd members, kubelab ui
// shows the Raft table; Chromium clicks "kill the etcd leader" and sees
// another member lead and the fault marked on the timeline; a request
// RBAC forbids, typed into the terminal, shows in the pipeline panel
// stopped at authorization, with the RBAC reason. With
// KUBELAB_SCREENSHOTS=DIR it saves the page (docs/ui-machinery.png).
func TestMachineryInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a cluster and a browser; skipped with -short")
	}
	browser := chromium(t)
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	home := t.TempDir()
	kubelab := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "--home", home, "--name", "ui-machinery")...)
		cmd.Env = append(os.Environ(), "SHELL=/bin/sh")
		return cmd
	}
	if out, err := kubelab("up", "--etcd", "3").CombinedOutput(); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	defer func() {
		if out, err := kubelab("down").CombinedOutput(); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	}()
	ui := kubelab("ui", "--no-browser")
	stdout, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	ui.Stderr = &stderr
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ui.Process.Signal(syscall.SIGINT)
		if err := ui.Wait(); err != nil {
			t.Errorf("kubelab ui after Ctrl-C: %v\n%s", err, stderr.String())
		}
	}()
	sc := bufio.NewScanner(stdout)
	url := ""
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "http://"); i >= 0 {
			url = sc.Text()[i:]
			break
		}
	}
	if url == "" {
		t.Fatalf("kubelab ui printed no URL:\n%s", stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	alloc, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1300),
		chromedp.UserDataDir(t.TempDir()))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(alloc)
	defer bcancel()

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
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`#faults button[data-kind="kill"][data-target="etcd-leader"]`)),
		chromedp.Poll[chromedp.Void](leaderJS+` !== "" && `+leaderJS+` !== "`+before+`"`, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#timeline svg line.marker") !== null`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("machinery").innerText`))
		t.Fatalf("after killing the etcd leader %s: %v\n%s", before, err, page)
	}
	err = chromedp.Do(bctx,
		chromedp.WaitVisible(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		chromedp.Click(chromedp.CSS(`.term.on .xterm-screen`)),
		chromedp.Focus(chromedp.CSS(`.term.on .xterm-helper-textarea`)),
		typeText("kubectl get secrets --as=system:serviceaccount:default:nobody"),
		chromedp.KeyEvent("\r"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#pipeline .request[data-stage="authorization"]') !== null`, chromedp.WithPollingTimeout(60*time.Second)),
	)
	if err != nil {
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("machinery").innerText`))
		t.Fatalf("the forbidden request in the pipeline: %v\n%s", err, page)
	}
	row, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#pipeline .request[data-stage="authorization"]').innerText`))
	if err != nil || !strings.Contains(row, "authorization: refused by RBAC") || !strings.Contains(row, "system:serviceaccount:default:nobody") {
		t.Errorf("the forbidden request's row: %q (%v)", row, err)
	}
	if dir := os.Getenv("KUBELAB_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ui-machinery.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
