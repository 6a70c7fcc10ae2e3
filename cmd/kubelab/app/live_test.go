package app_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/internal/syncbuf"
)

// TestLiveExerciseLoop is a learner's session, scripted, on one cluster:
// exercise start, check (the setup's low score, exit 1), a bypass refused
// by the exercise's admission policy, check --watch turning green while
// the fix is applied with kubelab kubectl, check and check --final at full
// marks, exercise stop leaving nothing behind.
func TestLiveExerciseLoop(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("live-%d", os.Getpid())
	liveLoop(t, bin, home, name, nil)
	if pids := clusterPIDs(home, name); len(pids) > 0 {
		t.Errorf("processes left after exercise stop: %v", pids)
	}
	if _, err := os.Stat(filepath.Join(home, "clusters", name)); !os.IsNotExist(err) {
		t.Errorf("state directory left after exercise stop (%v)", err)
	}
}

// TestLiveExerciseLoopOnKubeconfig is the same session on a cluster
// kubelab did not create (--backend kubeconfig): the exercise works in
// namespace default of that cluster, and exercise stop removes its
// objects, its admission policy and its record, and nothing else.
func TestLiveExerciseLoopOnKubeconfig(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, host, name := t.TempDir(), fmt.Sprintf("host-%d", os.Getpid()), fmt.Sprintf("live-%d", os.Getpid())
	out, err := exec.Command(bin, "--home", home, "--name", host, "up", "--workers", "1").CombinedOutput()
	t.Cleanup(func() { down(t, bin, home, host) })
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	kc := filepath.Join(home, "clusters", host, "admin.kubeconfig")
	liveLoop(t, bin, home, name, []string{"--backend", "kubeconfig", "--kubeconfig", kc})
	if _, err := os.Stat(filepath.Join(home, "kubeconfig", name)); !os.IsNotExist(err) {
		t.Errorf("run record left after exercise stop (%v)", err)
	}
	left, err := exec.Command(bin, "--home", home, "--name", host, "kubectl", "get", "deployments,services,configmaps,validatingadmissionpolicies",
		"-A", "-l", "dev.kubelab.managed", "-o", "name").CombinedOutput()
	if err != nil || strings.TrimSpace(string(left)) != "" {
		t.Errorf("objects of the exercise left on the host cluster (%v):\n%s", err, left)
	}
	if out, err := exec.Command(bin, "--home", home, "--name", host, "kubectl", "get", "deployment", "coredns", "-n", "kube-system", "-o", "name").CombinedOutput(); err != nil {
		t.Errorf("the host cluster's own objects were touched: %v\n%s", err, out)
	}
}

// liveLoop runs the learner's session on exercise fix-service-selector,
// started with kubelab exercise start and the given extra arguments.
func liveLoop(t *testing.T, bin, home, name string, startArgs []string) {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--home", home, "--name", name}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "KUBELAB_NAME=", "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("kubelab %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	out, code := run(append([]string{"exercise", "start", "exercises/fix-service-selector"}, startArgs...)...)
	t.Cleanup(func() {
		for _, dir := range []string{"clusters", "kubeconfig"} {
			if _, err := os.Stat(filepath.Join(home, dir, name)); err == nil {
				down(t, bin, home, name)
			}
		}
	})
	if code != 0 || !strings.Contains(out, "export KUBECONFIG=") || !strings.Contains(out, "answers nobody") {
		t.Fatalf("exercise start: exit %d\n%s", code, out)
	}
	// Its hints act on this cluster, and a live run has no submission.
	if strings.Contains(out, "Try: kubelab") || !strings.Contains(out, "exercise stop --name "+name) || strings.Contains(out, "| submission |") {
		t.Errorf("exercise start: up's hints, no exercise stop --name %s, or a submission step:\n%s", name, out)
	}

	if out, code := run("check"); code != 1 || !strings.Contains(out, "Score: 3/10, FAILED") || !strings.Contains(out, "hint: Compare the Service's selector") ||
		!strings.Contains(out, "to hold within 30s (gave up after 5s") {
		t.Errorf("check after setup: exit %d, want 1 and 3/10 with hints, and the wait's patience said\n%s", code, out)
	}
	if out, code := run("kubectl", "delete", "service", "web"); code == 0 || !strings.Contains(out, "Service default/web is part of the exercise: repair it in place") {
		t.Errorf("kubectl delete service web: exit %d, want the policy's denial\n%s", code, out)
	}

	// Ctrl-C is how a watch ends: the last evaluation's verdict, not 130.
	stopped := exec.Command(bin, "check", "--watch", "--patience", "2s", "--home", home, "--name", name)
	stopped.Dir, stopped.Env = root, append(os.Environ(), "KUBELAB_NAME=", "KUBECONFIG=")
	sout := &syncbuf.Buffer{}
	stopped.Stdout, stopped.Stderr = sout, sout
	if err := stopped.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(sout.String(), "Score: "); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("check --watch printed no evaluation:\n%s", sout.String())
		}
	}
	_ = stopped.Process.Signal(os.Interrupt)
	_ = stopped.Wait()
	if code := stopped.ProcessState.ExitCode(); code != 1 || !strings.Contains(sout.String(), "Stopped watching: 3/10") {
		t.Errorf("check --watch stopped by Ctrl-C: exit %d, want 1 (3/10 is below the passing score)\n%s", code, sout.String())
	}

	// check --watch off a terminal prints each evaluation and returns once
	// every check passes.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	watch := exec.CommandContext(ctx, bin, "check", "--watch", "--patience", "2s", "--home", home, "--name", name)
	watch.Dir, watch.Env = root, append(os.Environ(), "KUBELAB_NAME=", "KUBECONFIG=")
	wout := &syncbuf.Buffer{}
	watch.Stdout, watch.Stderr = wout, wout
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(wout.String(), "Score: ") { // the first evaluation, before the fix
		if ctx.Err() != nil {
			t.Fatalf("check --watch printed no evaluation:\n%s", wout.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, patch := range []string{`{"spec":{"selector":{"app":"web"}}}`, `{"spec":{"ports":[{"port":80,"targetPort":"http"}]}}`} {
		if out, code := run("kubectl", "patch", "service", "web", "--type=merge", "-p", patch); code != 0 {
			t.Errorf("kubectl patch: exit %d\n%s", code, out)
		}
	}
	if err := watch.Wait(); err != nil || !strings.Contains(wout.String(), "Score: 10/10, PASSED") || !strings.Contains(wout.String(), "evaluation 1: 3/10") ||
		!strings.Contains(wout.String(), "Every check that runs live passes. Final score: kubelab check --final --name "+name) {
		t.Errorf("check --watch: %v, want it to start at 3/10 and return at 10/10\n%s", err, wout.String())
	}

	if out, code := run("check"); code != 0 || !strings.Contains(out, "Score: 10/10, PASSED") {
		t.Errorf("check after the fix: exit %d\n%s", code, out)
	}
	if out, code := run("check", "--final"); code != 0 || !strings.Contains(out, "Score: 10/10, PASSED") {
		t.Errorf("check --final: exit %d\n%s", code, out)
	}
	if out, code := run("exercise", "stop"); code != 0 {
		t.Errorf("exercise stop: exit %d\n%s", code, out)
	}
	if out, code := run("check"); code != 2 {
		t.Errorf("check without a cluster: exit %d, want 2\n%s", code, out)
	}
}
