package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/internal/testbin"
)

// tmuxPane drives a program in a detached tmux session, as a learner at
// a terminal would: it types keys and reads the screen.
type tmuxPane struct {
	t       *testing.T
	session string
}

func newTmuxPane(t *testing.T, dir string, argv ...string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (CI installs it)")
	}
	p := &tmuxPane{t: t, session: fmt.Sprintf("kubelab-test-%d", time.Now().UnixNano())}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	// The pane stays after the program exits, so its last screen can be read.
	p.tmux("new-session", "-d", "-s", p.session, "-x", "150", "-y", "50", "-c", dir, "-e", "LANG=C.UTF-8",
		strings.Join(quoted, " ")+"; echo KUBELAB-EXIT=$?; sleep 3600")
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() })
	p.tmux("set-option", "-t", p.session, "history-limit", "20000")
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is everything the pane showed, its history included.
func (p *tmuxPane) screen() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", p.session)
}

// waitFor waits until the screen shows want, failing with the screen
// when ctx ends first.
func (p *tmuxPane) waitFor(ctx context.Context, want string) {
	p.t.Helper()
	for {
		if strings.Contains(p.screen(), want) {
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("the screen never showed %q; it shows:\n%s", want, p.screen())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// typeLine types text (literally, UTF-8 included) and Enter.
func (p *tmuxPane) typeLine(text string) {
	p.t.Helper()
	if text != "" {
		p.tmux("send-keys", "-t", p.session, "-l", text)
	}
	p.tmux("send-keys", "-t", p.session, "Enter")
}

// TestInterviewInTmux: `kubelab drill --interview --lang zh` in a real
// terminal: three random questions of the course, two answered in
// Chinese and one cut off by the timer with what was typed so far, then
// the three drills on real clusters, each answer's key points, the
// summary with the weakest topics; --history then shows the session.
func TestInterviewInTmux(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	if testing.Short() {
		t.Skip("boots three real clusters; skipped with -short")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	p := newTmuxPane(t, repoRoot(), bin, "drill", "--interview", "--lang", "zh", "--home", home,
		"--topic", "admission,rbac,watch", "--count", "3", "--time", "12s", "--seed", "7")

	p.waitFor(ctx, "━━ 问题 1/3")
	p.typeLine("请求先经过认证、授权，再经过变更准入和验证准入，最后写入 etcd。")
	p.typeLine("")
	p.waitFor(ctx, "━━ 问题 2/3")
	p.typeLine("RBAC 默认拒绝，Role 和 RoleBinding 授权")
	// No empty line: the clock ends this answer, and the line counts.
	p.waitFor(ctx, "（时间到）")
	p.waitFor(ctx, "━━ 问题 3/3")
	p.typeLine("watch 从 resourceVersion 继续；太旧时返回 410 Gone，客户端重新 list。")
	p.typeLine("")
	p.waitFor(ctx, "KUBELAB-EXIT=")
	screen := p.screen()
	t.Logf("the interview, as the terminal showed it:\n%s", screen)
	if !strings.Contains(screen, "KUBELAB-EXIT=0") {
		t.Fatalf("the interview did not exit 0")
	}
	for _, want := range []string{
		"面试：3 道题，每题 12s", "在真实集群上运行这 3 个演练",
		"━━ 1. ", "━━ 2. ", "━━ 3. ", "集群的表现与参考答案一致",
		"━━ 总结", "问题", "合计：", "最薄弱的主题：", "记录已保存：",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	// The session on disk: three answers, the second cut off by the
	// clock with the line typed before it, each scored.
	files, _ := filepath.Glob(filepath.Join(home, "interviews", "*.json"))
	if len(files) != 1 {
		t.Fatalf("sessions saved: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Questions []struct {
			Drill, Answer  string
			TimeUp, Passed bool
			Made, Points   int
		}
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Questions) != 3 {
		t.Fatalf("%d questions saved:\n%s", len(rec.Questions), data)
	}
	made := 0
	for i, q := range rec.Questions {
		if !q.Passed || q.Points < 3 || q.TimeUp != (i == 1) || q.Answer == "" {
			t.Errorf("question %d: %+v", i+1, q)
		}
		made += q.Made
	}
	if !strings.Contains(rec.Questions[1].Answer, "RBAC 默认拒绝") {
		t.Errorf("the answer cut off by the clock lost its line: %q", rec.Questions[1].Answer)
	}
	if made == 0 {
		t.Errorf("three answers in Chinese made no key point:\n%s", data)
	}
	out, code := kubelabIn(t, home, "drill", "--history", "--lang", "zh")
	points := rec.Questions[0].Points + rec.Questions[1].Points + rec.Questions[2].Points
	if code != 0 || !strings.Contains(out, "场次") || !strings.Contains(out, fmt.Sprintf("%d/%d", made, points)) {
		t.Errorf("--history: exit %d\n%s", code, out)
	}
}

// kubelabIn runs the kubelab binary with the given home.
func kubelabIn(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
	cmd.Dir = repoRoot()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}
