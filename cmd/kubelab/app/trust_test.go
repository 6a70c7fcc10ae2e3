package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kubelab.dev/kubelab/internal/testbin"
)

// binOrSkip is the kubelab binary, or a skip in -short mode.
func binOrSkip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a cluster")
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// clusterPIDs lists the live processes tagged with cluster name of home.
func clusterPIDs(home, name string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		env := bytes.Split(b, []byte{0})
		var inHome, inCluster bool
		for _, kv := range env {
			inHome = inHome || string(kv) == "KUBELAB_HOME="+home
			inCluster = inCluster || string(kv) == "KUBELAB_CLUSTER="+name
		}
		if inHome && inCluster {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !bytes.Contains(st, []byte(") Z ")) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func down(t *testing.T, bin, home, name string) {
	t.Helper()
	out, err := exec.Command(bin, "down", "--home", home, "--name", name).CombinedOutput()
	if err != nil {
		t.Errorf("down: %v\n%s", err, out)
	}
}

// TestUpDoesNotLeakCallersDescriptors: `flock LOCK kubelab up` must not
// leave the lock held by the cluster, nor `kubelab up | tee` a pipe open.
func TestUpDoesNotLeakCallersDescriptors(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("fds-%d", os.Getpid())
	lockPath := filepath.Join(t.TempDir(), "lock")
	lock, err := os.Create(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(w.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)

	cmd := exec.Command(bin, "up", "--home", home, "--name", name)
	cmd.ExtraFiles = []*os.File{lock, w} // fds 3 and 4 of kubelab, without close-on-exec
	t.Cleanup(func() { down(t, bin, home, name) })
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	lock.Close()
	w.Close()

	pids := clusterPIDs(home, name)
	if len(pids) == 0 {
		t.Fatal("no component processes found")
	}
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
			if target == lockPath || target == pipe {
				argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				words := strings.SplitN(string(argv), "\x00", 4)
				t.Errorf("pid %d (%s) holds the caller's %s as fd %s", pid, strings.Join(words[:min(3, len(words))], " "), target, e.Name())
			}
		}
	}
	again, err := os.Open(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := unix.Flock(int(again.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("flock -n on the caller's lock while the cluster is up: %v", err)
	}
	// Every writer gone: the reader sees end of file at once.
	done := make(chan error, 1)
	go func() { _, err := r.Read(make([]byte, 1)); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Errorf("read the caller's pipe: %v, want EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the caller's pipe is still open for writing in the cluster")
	}
}

// TestInterruptedUpSaysInterrupted: Ctrl-C during boot is not a component
// failure: kubelab says "interrupted", exits 130 and leaves nothing.
func TestInterruptedUpSaysInterrupted(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("intr-%d", os.Getpid())
	cmd := exec.Command(bin, "up", "--home", home, "--name", name)
	var stderr bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "waiting for /readyz") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want exit status 130\n%s", err, stderr.String())
	}
	out := stderr.String()
	if !strings.Contains(out, "interrupted") {
		t.Errorf("output does not say interrupted:\n%s", out)
	}
	for _, bad := range []string{"not healthy", "context canceled", "last lines of"} {
		if strings.Contains(out, bad) {
			t.Errorf("output reports the interruption as a failure (%q):\n%s", bad, out)
		}
	}
	if pids := clusterPIDs(home, name); len(pids) > 0 {
		t.Errorf("processes left: %v", pids)
	}
	if _, err := os.Stat(filepath.Join(home, "clusters", name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory left: %v", err)
	}
}

// TestInterruptedLabSaysInterrupted: Ctrl-C in a lab is not the lab's
// failure: no FAILED step, "interrupted", exit 130, no cluster left.
func TestInterruptedLabSaysInterrupted(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("lab-%d", os.Getpid())
	cmd := exec.Command(bin, "run", "--home", home, "--name", name, "cmd/kubelab/app/testdata/slow.yaml")
	cmd.Dir = filepath.Join("..", "..", "..")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var out bytes.Buffer
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "wait for ever | started") {
			break
		}
	}
	if len(clusterPIDs(home, name)) == 0 {
		t.Fatalf("--name %s not honoured: no processes of that cluster\n%s", name, out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want exit status 130\n%s", err, out.String())
	}
	for _, bad := range []string{"FAILED", "context canceled", "1 failed", "ERROR"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("output reports the interruption as a failure (%q):\n%s", bad, out.String())
		}
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("output does not say interrupted:\n%s", out.String())
	}
	if pids := clusterPIDs(home, name); len(pids) > 0 {
		t.Errorf("processes left: %v", pids)
	}
}

// TestClusterCommandsTakeName: get clusters, status -o json, logs, and
// kubectl and etcdctl with --name (before or after the tool) reach the
// named cluster.
func TestClusterCommandsTakeName(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("named-%d", os.Getpid())
	out, err := exec.Command(bin, "up", "--home", home, "--name", name).CombinedOutput()
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	t.Cleanup(func() { down(t, bin, home, name) })
	if !strings.Contains(string(out), "Try: kubelab kubectl --name "+name+" get nodes; kubelab status --name "+name+"; kubelab down --name "+name) {
		t.Errorf("up's hints do not name the cluster:\n%s", out)
	}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "KUBELAB_HOME="+home, "KUBELAB_NAME=", "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("kubelab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var clusters []struct{ Name, Backend string }
	if err := json.Unmarshal([]byte(cli("get", "clusters", "-o", "json")), &clusters); err != nil || len(clusters) != 1 || clusters[0].Name != name {
		t.Errorf("get clusters: %+v, %v", clusters, err)
	}
	var st struct {
		Cluster    string
		Components []struct{ Name, State string }
		Etcd       []struct{ IsLeader bool }
	}
	if err := json.Unmarshal([]byte(cli("status", "--name", name, "-o", "json")), &st); err != nil || st.Cluster != name || len(st.Components) < 5 || len(st.Etcd) != 1 || !st.Etcd[0].IsLeader {
		t.Errorf("status -o json: %+v, %v", st, err)
	}
	for _, args := range [][]string{{"kubectl", "--name", name, "get", "nodes"}, {"--name", name, "kubectl", "get", "nodes"}} {
		if out := cli(args...); !strings.Contains(out, "worker-1") {
			t.Errorf("kubelab %s: %s", strings.Join(args, " "), out)
		}
	}
	if out := cli("etcdctl", "--name", name, "endpoint", "health"); !strings.Contains(out, "is healthy") {
		t.Errorf("etcdctl: %s", out)
	}
	// logs: the components, and the last lines of one, which began by
	// starting (the line kubelab writes before each start).
	if out := cli("logs", "--name", name); !strings.Contains(out, "kube-scheduler-1\n") {
		t.Errorf("logs lists no kube-scheduler-1:\n%s", out)
	}
	if out := cli("logs", "--name", name, "kube-scheduler-1"); !strings.HasPrefix(out, "---- kubelab: starting kube-scheduler-1") || !strings.Contains(out, "leaderelection") {
		t.Errorf("logs kube-scheduler-1 does not start with its start and show its leader election:\n%s", out)
	}
	if out := cli("__complete", "logs", "--name", name, ""); !strings.Contains(out, "kube-scheduler-1\tkube-scheduler") {
		t.Errorf("logs does not complete the components:\n%s", out)
	}
	if out := cli("logs", "--name", name, "etcd-1", "--tail", "2"); strings.Count(out, "\n") != 2 {
		t.Errorf("logs --tail 2 printed %d lines:\n%s", strings.Count(out, "\n"), out)
	}
	for _, c := range []struct {
		component string
		code      int
		says      string
	}{{"worker-1", 3, "simulated by kwok"}, {"nope", 2, "its components: etcd-1, "}} {
		cmd := exec.Command(bin, "logs", "--name", name, c.component)
		cmd.Env = append(os.Environ(), "KUBELAB_HOME="+home)
		if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != c.code || !strings.Contains(string(out), c.says) {
			t.Errorf("logs %s: %v, want exit %d saying %q\n%s", c.component, err, c.code, c.says, out)
		}
	}
	cmd := exec.Command(bin, "kubectl", "--name", "no-such-cluster", "get", "nodes")
	cmd.Env = append(os.Environ(), "KUBELAB_HOME="+home)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no such cluster") {
		t.Errorf("kubectl --name of a missing cluster: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "node", "exec", "--name", name, "worker-1", "--", "true")
	cmd.Env = append(os.Environ(), "KUBELAB_HOME="+home)
	if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "needs the docker backend") {
		t.Errorf("node exec on simulated nodes: %v, want exit 2 naming the docker backend\n%s", err, out)
	}
}

// TestKeepOnFailureKeepsTheNamedCluster: run --keep-on-failure --name X
// on a failing lab boots and names X, says once that it kept it, and X
// still serves after the command returned (no later command removes it
// as an orphan) until down.
func TestKeepOnFailureKeepsTheNamedCluster(t *testing.T) {
	t.Parallel() // boots a cluster: see TestMain
	bin := binOrSkip(t)
	home, name := t.TempDir(), fmt.Sprintf("keep-%d", os.Getpid())
	cmd := exec.Command(bin, "run", "--home", home, "--name", name, "--keep-on-failure", "cmd/kubelab/app/testdata/failing.yaml")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { down(t, bin, home, name) })
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("run: %v, want exit 1 (the lab fails)\n%s", err, out)
	}
	if n := strings.Count(string(out), "cluster kept"); n != 1 {
		t.Errorf("'cluster kept' said %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(string(out), "booting cluster "+name+" ") || !strings.Contains(string(out), "down --name "+name) {
		t.Errorf("the progress does not name the cluster %s:\n%s", name, out)
	}
	st := exec.Command(bin, "status", "--home", home, "--name", name)
	sout, err := st.CombinedOutput()
	if err != nil || strings.Contains(string(sout), "orphaned") || !strings.Contains(string(sout), "kube-apiserver-1") {
		t.Errorf("status of the kept cluster: %v\n%s", err, sout)
	}
	kc := exec.Command(bin, "kubectl", "--home", home, "--name", name, "get", "nodes")
	if kout, err := kc.CombinedOutput(); err != nil || !strings.Contains(string(kout), "worker-1") {
		t.Errorf("the kept cluster does not serve: %v\n%s", err, kout)
	}
}
