package proc

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestReadsALiveProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	// Only this test's variables: CI exports KUBELAB_BIN and others, which
	// an inherited environment would carry into the child.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "KUBELAB_PROC_TEST=yes", "OTHER=no"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	state, start := Stat(pid)
	if state == "" || start == "" || start == "0" {
		t.Fatalf("Stat(%d) = %q, %q", pid, state, start)
	}
	if StartTime(pid) != start {
		t.Error("the start time changed between two reads")
	}
	if StartTime(1) == start {
		t.Error("the process reports the start time of PID 1, started long before it")
	}
	// Start returns once execve is past its point of no return, but the
	// kernel fills in the new image's environment a moment later: until
	// then /proc/PID/environ reads empty. Wait for sleep to be asleep.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, _ := Stat(pid); s == "S" {
			break
		}
	}
	env := Environ(pid, "KUBELAB_")
	if env["KUBELAB_PROC_TEST"] != "yes" || len(env) != 1 {
		t.Errorf("Environ = %v, want only KUBELAB_PROC_TEST=yes", env)
	}
	if !slices.Contains(PIDs(), pid) {
		t.Errorf("PIDs does not list %d", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if s, _ := Stat(pid); s != "" {
		t.Errorf("a reaped process has state %q", s)
	}
}
