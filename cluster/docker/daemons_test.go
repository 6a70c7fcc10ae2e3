package docker

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonLab runs files/daemons.sh's supervisor on this host, around a
// sleep standing in for a node's daemon, with its control directory in a
// temp dir: the protocol node-init.sh and actInNode share, without Docker.
type daemonLab struct {
	t        *testing.T
	lib, ctl string
}

func newDaemonLab(t *testing.T) *daemonLab {
	if runtime.GOOS != "linux" {
		t.Skip("reads process states from /proc")
	}
	dir := t.TempDir()
	l := &daemonLab{t: t, lib: filepath.Join(dir, "daemons.sh"), ctl: filepath.Join(dir, "ctl")}
	src, err := files.ReadFile("files/daemons.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.lib, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sup := l.sh(`. "$0" && supervise sleeper - sleep 600`)
	sup.Stdout, sup.Stderr = &out, &out
	sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the supervisor and its sleep, to end together
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-sup.Process.Pid, syscall.SIGKILL)
		_ = sup.Wait()
		t.Logf("supervisor's output:\n%s", out.String())
	})
	return l
}

func (l *daemonLab) sh(script string, args ...string) *exec.Cmd {
	cmd := exec.Command("sh", append([]string{"-c", script, l.lib}, args...)...)
	cmd.Env = append(os.Environ(), "KUBELAB_DAEMONS="+l.ctl)
	return cmd
}

// do runs daemonctl ACTION sleeper, as actInNode does in a node.
func (l *daemonLab) do(action string) {
	l.t.Helper()
	start := time.Now()
	out, err := l.sh(`. "$0" && daemonctl "$@"`, action, "sleeper").CombinedOutput()
	if err != nil {
		l.t.Fatalf("daemonctl %s: %v: %s", action, err, out)
	}
	l.t.Logf("daemonctl %s: %s", action, time.Since(start).Round(time.Millisecond))
}

// pid is the daemon's pid as its supervisor wrote it, 0 when it is down.
func (l *daemonLab) pid() int {
	b, err := os.ReadFile(filepath.Join(l.ctl, "sleeper.pid"))
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// state is a process's state letter (S sleeping, T stopped), "" when gone.
func state(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	if s := strings.Fields(rest); len(s) > 0 && s[0] != "Z" {
		return s[0]
	}
	return ""
}

// eventually polls cond for up to d.
func (l *daemonLab) eventually(d time.Duration, what string, cond func() bool) {
	l.t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			l.t.Fatalf("not %s after %s", what, d)
		}
	}
}

func TestDaemonSupervisor(t *testing.T) {
	l := newDaemonLab(t)
	l.eventually(5*time.Second, "started", func() bool { return l.pid() != 0 })
	p1 := l.pid()

	// A signal is delivered when its target next runs: the state follows.
	l.do("pause")
	l.eventually(time.Second, "stopped (T) after pause", func() bool { return state(p1) == "T" })
	l.do("resume")
	l.eventually(time.Second, "running after resume", func() bool { s := state(p1); return s != "T" && s != "" })

	l.do("restart")
	p2 := l.pid()
	if p2 == 0 || p2 == p1 || state(p1) != "" {
		t.Fatalf("restart: pid %d -> %d (old one in state %q)", p1, p2, state(p1))
	}

	l.do("kill")
	if l.pid() != 0 || state(p2) != "" {
		t.Fatalf("killed daemon still there: pid file %d, %d in state %q", l.pid(), p2, state(p2))
	}
	time.Sleep(1500 * time.Millisecond) // longer than the supervisor's restart delay
	if p := l.pid(); p != 0 {
		t.Fatalf("a killed daemon was started again (pid %d) before start", p)
	}
	l.do("kill") // down already: stays down
	l.do("start")
	p3 := l.pid()
	if state(p3) == "" {
		t.Fatalf("started daemon %d does not run", p3)
	}

	// On its own exit the supervisor starts it again, after a second.
	if err := syscall.Kill(p3, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	l.eventually(5*time.Second, "started again after it died", func() bool { p := l.pid(); return p != 0 && p != p3 })

	// A paused daemon is resumed to take its SIGTERM.
	p4 := l.pid()
	l.do("pause")
	l.do("stop")
	if l.pid() != 0 || state(p4) != "" {
		t.Fatalf("stopped daemon still there: pid file %d, %d in state %q", l.pid(), p4, state(p4))
	}
	l.do("restart") // restart of a daemon held down starts it
	if state(l.pid()) == "" {
		t.Fatal("restart did not start a stopped daemon")
	}
	for _, bad := range []string{"pause", "frobnicate"} {
		l.do("kill")
		if out, err := l.sh(`. "$0" && daemonctl "$@"`, bad, "sleeper").CombinedOutput(); err == nil {
			t.Errorf("daemonctl %s of a daemon that is down passed: %s", bad, out)
		}
	}
}
