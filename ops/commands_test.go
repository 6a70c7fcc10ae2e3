package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name, command  string
		stdout, stderr string
		exit           int
		json           bool
	}{
		{"json", `echo '{"items": [1, 2]}'; echo warn >&2`, `{"items": [1, 2]}`, "warn", 0, true},
		{"text", `printf 'a\nb\n\n'`, "a\nb", "", 0, false},
		{"failure", `echo no >&2; exit 3`, "", "no", 3, false},
		{"broken json", `echo '{"a":'`, `{"a":`, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, text, err := capture(exec.Command("sh", "-c", tc.command))
			if (err != nil) != (tc.exit != 0) {
				t.Fatalf("err = %v, want exit %d", err, tc.exit)
			}
			if res.Stdout != tc.stdout || res.Stderr != tc.stderr || res.ExitCode != tc.exit {
				t.Errorf("result = %+v, want stdout %q stderr %q exit %d", res, tc.stdout, tc.stderr, tc.exit)
			}
			if (res.JSON != nil) != tc.json {
				t.Errorf("json = %#v, want parsed: %v", res.JSON, tc.json)
			}
			if tc.json {
				m, _ := res.JSON.(map[string]any)
				if items, _ := m["items"].([]any); len(items) != 2 {
					t.Errorf("json.items = %#v, want 2 items", m["items"])
				}
			}
			if want := tc.stdout; tc.stderr != "" && text == "" || tc.stderr == "" && text != want {
				t.Errorf("combined output = %q", text)
			}
		})
	}
	res, _, err := capture(exec.Command("/nonexistent/binary"))
	if err == nil || res.ExitCode != -1 {
		t.Errorf("a command that did not start: exit %d, err %v; want -1 and an error", res.ExitCode, err)
	}
}

// bindEnv is the part of Env a command uses without a cluster: bindings.
type bindEnv struct {
	Env // nil: other methods are not called
	b   map[string]any
}

func (e *bindEnv) Bind(name string, v any)  { e.b[name] = v }
func (e *bindEnv) Bindings() map[string]any { return e.b }
func (e *bindEnv) View() View               { return nil }

func TestRetry(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "n")
	// Each attempt counts; it exits 0 from the third on.
	script := fmt.Sprintf(`n=$(( $(cat %[1]s 2>/dev/null || echo 0) + 1 )); echo $n > %[1]s; echo $n; [ $n -ge 3 ]`, counter)
	mk := func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, "sh", "-c", script) }
	zero, seven := 0, 7
	until, err := assertions.Compile(`out.stdout == "4"`, map[string]reflect.Type{"out": commandResultType}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		retry *Retry
		want  string // in the output, or in the error when fail
		fail  bool
	}{
		{"exit code", &Retry{ExitCode: &zero}, "passed at attempt 3", false},
		{"until", &Retry{until: until}, "passed at attempt 4", false},
		{"never", &Retry{ExitCode: &seven, Timeout: cluster.Duration{Duration: 700 * time.Millisecond}}, "no attempt passed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(counter)
			env := &bindEnv{b: map[string]any{}}
			out, err := runCommand(context.Background(), env, command{what: "count", bind: "out", retry: tc.retry}, mk)
			got := out
			if err != nil {
				got = err.Error()
			}
			if (err != nil) != tc.fail || !strings.Contains(got, tc.want) {
				t.Fatalf("runCommand = %q, %v; want %q (failure: %v)", out, err, tc.want, tc.fail)
			}
			if tc.fail && !strings.Contains(got, ", want 7") {
				t.Errorf("the error does not say why the last attempt failed: %v", err)
			}
			if res, _ := env.b["out"].(assertions.CommandResult); res.Stdout == "" {
				t.Errorf("the last attempt's result is not bound: %#v", env.b["out"])
			}
		})
	}
}

func TestExpectRefusal(t *testing.T) {
	re := regexp.MustCompile(`exceeded quota`)
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("exceeded quota: q, requested: count/configmaps=1"))
	wrapped := fmt.Errorf("apply configmap/c (lab.yaml:3:5): %w", quota)
	for _, tc := range []struct {
		name string
		err  error
		re   *regexp.Regexp
		ok   bool
	}{
		{"refused as expected", wrapped, re, true},
		{"succeeded", nil, re, false},
		{"refused for another reason", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "c"), re, false},
		// The operation's own wrapping is not the apiserver's message.
		{"match in the wrapping only", wrapped, regexp.MustCompile(`lab\.yaml`), false},
		{"not an apiserver answer", errors.New("dial tcp: connection refused"), regexp.MustCompile(`refused`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ExpectRefusal("apply c", "", tc.err, tc.re)
			if (err == nil) != tc.ok {
				t.Fatalf("ExpectRefusal = %q, %v; want ok %v", out, err, tc.ok)
			}
			if tc.ok && !strings.Contains(out, "refused as expected") {
				t.Errorf("output %q does not say it was refused", out)
			}
			if !tc.ok && tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("the refusal is not in the chain: %v", err)
			}
		})
	}
}

func TestProbeRecord(t *testing.T) {
	r := &probeRecord{start: time.Now(), lastOK: time.Now()}
	if p := r.snapshot(); p.Availability != 1 || p.Attempts != 0 || !p.Running {
		t.Errorf("before any attempt: %+v", p)
	}
	r.add(nil, "")
	r.add(errors.New("exit status 1"), "refused")
	time.Sleep(30 * time.Millisecond)
	r.add(nil, "")
	p := r.snapshot()
	if p.Attempts != 3 || p.Successes != 2 || p.Failures != 1 || p.Availability != 2.0/3 || p.Streak != 1 {
		t.Errorf("counts: %+v", p)
	}
	if p.MaxGap < 0.03 || !strings.Contains(p.LastError, "refused") {
		t.Errorf("maxGap %.3fs (want >= 30ms, the gap with no success), lastError %q", p.MaxGap, p.LastError)
	}
	r.add(nil, "")
	if s := r.snapshot().Streak; s != 2 {
		t.Errorf("streak after two successes in a row: %d, want 2", s)
	}
	p = r.snapshot()
	r.stop()
	time.Sleep(20 * time.Millisecond)
	if q := r.snapshot(); q.Running || q.MaxGap != p.MaxGap {
		t.Errorf("after stop: %+v", q)
	}
}

func TestAimed(t *testing.T) {
	for _, c := range []struct {
		kind, name, want string
	}{
		{"kill", "etcd-leader", "kill etcd-leader"},
		{"nodeDown", "worker-2", "node down worker-2"},
		{"drain", "worker-1", "drain worker-1"},
		{"cordon", "worker-1", "cordon worker-1"},
	} {
		op, err := Aimed(c.kind, c.name)
		if err != nil || op.Kind() != c.kind || op.Summary() != c.want {
			t.Errorf("Aimed(%s, %s) = %s %q, %v; want %s %q", c.kind, c.name, op.Kind(), op.Summary(), err, c.kind, c.want)
		}
	}
	for _, kind := range []string{"wait", "nope"} {
		if _, err := Aimed(kind, "x"); err == nil {
			t.Errorf("Aimed(%s) made an operation", kind)
		}
	}
}

// TestRetryCutShortKeepsTheLastResult: an attempt the retry's deadline
// kills has no result; the attempt before it stays bound.
func TestRetryCutShortKeepsTheLastResult(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "n")
	// The first attempt answers at once; every later one outlives the
	// retry's deadline.
	script := fmt.Sprintf(`n=$(( $(cat %[1]s 2>/dev/null || echo 0) + 1 )); echo $n > %[1]s; echo $n; [ $n -ge 2 ] && sleep 5; exit 1`, counter)
	mk := func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, "sh", "-c", script) }
	zero := 0
	env := &bindEnv{b: map[string]any{}}
	_, err := runCommand(context.Background(), env, command{what: "count", bind: "out", retry: &Retry{ExitCode: &zero, Timeout: cluster.Duration{Duration: 700 * time.Millisecond}}}, mk)
	if err == nil || !strings.Contains(err.Error(), "exit code 1, want 0") {
		t.Errorf("runCommand: %v, want the first attempt's exit code as the reason", err)
	}
	if res, _ := env.b["out"].(assertions.CommandResult); res.Stdout != "1" || res.ExitCode != 1 {
		t.Errorf("bound %#v, want the first attempt's (stdout 1, exit code 1)", env.b["out"])
	}
}

// TestCaptureDoesNotWaitForWhatAScriptLeftRunning: a script that exits 0
// and leaves a child holding its output passes a second later, with the
// output it wrote, rather than when the child ends.
func TestCaptureDoesNotWaitForWhatAScriptLeftRunning(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		if raw, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	start := time.Now()
	res, text, err := capture(exec.Command("sh", "-c", `echo started; sleep 30 & echo $! > "$0"`, pidFile))
	if err != nil || res.ExitCode != 0 || text != "started" {
		t.Errorf("capture = %#v, %q, %v; want exit code 0 and its output", res, text, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("capture waited %s for the child the script left", d)
	}
}
