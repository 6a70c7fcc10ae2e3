package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/internal/binaries"
)

func init() {
	Register("kubectl", "{args: [get, nodes], expectOutput: worker-1}", func(k *KubectlOp) Op { return k })
	Register("script", "{command: 'test -n \"$KUBECONFIG\"'}", func(s *ScriptOp) Op { return s })
}

// KubectlOp runs kubectl.
type KubectlOp struct {
	Args         []string `yaml:"args"`
	ExpectError  bool     `yaml:"expectError,omitempty"`
	Namespace    string   `yaml:"namespace,omitempty"`
	ExpectOutput string   `yaml:"expectOutput,omitempty"`
	Stdin        string   `yaml:"stdin,omitempty"`
	Bind         string   `yaml:"bind,omitempty"`
	Retry        *Retry   `yaml:"retry,omitempty"`

	expect *regexp.Regexp
}

// Binding is the name the result is bound to.
func (k *KubectlOp) Binding() (name, field string) { return k.Bind, "bind" }

// Summary shows the command line.
func (k *KubectlOp) Summary() string { return "kubectl " + strings.Join(k.Args, " ") }

// DefaultTimeout is that of a command.
func (k *KubectlOp) DefaultTimeout() time.Duration { return slowTimeout }

// OwnDuration is the retries' timeout.
func (k *KubectlOp) OwnDuration() time.Duration { return k.Retry.duration() }

// Validate checks the arguments, compiles expectOutput and the retry's
// condition and binds the result's name.
func (k *KubectlOp) Validate(c Checker) {
	if k.Args != nil && len(k.Args) == 0 {
		c.Errorf("args", "want at least one argument")
	}
	k.expect = c.Regexp(k.ExpectOutput, "expectOutput")
	c.BindType(k.Bind, commandResultType, "bind")
	k.Retry.validate(c, k.ExpectError)
}

// Exec runs the built-in kubectl against the lab cluster.
func (k *KubectlOp) Exec(ctx context.Context, env Env) (string, error) {
	args := append(kubectl(env), k.Args...)
	if k.Namespace != "" {
		args = append(args, "--namespace", k.Namespace)
	}
	return runCommand(ctx, env, command{what: "kubectl " + strings.Join(k.Args, " "), expectError: k.ExpectError,
		expect: k.expect, bind: k.Bind, retry: k.Retry}, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig)
		if k.Stdin != "" {
			cmd.Stdin = strings.NewReader(k.Stdin)
		}
		return cmd
	})
}

// kubectl is the command line of the built-in kubectl: kubelab-kubectl
// next to kubelab runs it itself (`kubelab kubectl` would start kubelab
// only to execute that binary).
func kubectl(env Env) []string { return binaries.KubectlOf(env.Binary()) }

// ScriptOp runs a shell command.
type ScriptOp struct {
	Command      string `yaml:"command"`
	ExpectError  bool   `yaml:"expectError,omitempty"`
	ExpectOutput string `yaml:"expectOutput,omitempty"`
	Bind         string `yaml:"bind,omitempty"`
	Retry        *Retry `yaml:"retry,omitempty"`
	ReadsOnly    bool   `yaml:"readOnly,omitempty"`

	expect *regexp.Regexp
}

// Binding is the name the result is bound to.
func (s *ScriptOp) Binding() (name, field string) { return s.Bind, "bind" }

// Summary shows the command.
func (s *ScriptOp) Summary() string { return "script " + s.Command }

// DefaultTimeout is that of a command.
func (s *ScriptOp) DefaultTimeout() time.Duration { return slowTimeout }

// OwnDuration is the retries' timeout.
func (s *ScriptOp) OwnDuration() time.Duration { return s.Retry.duration() }

// Validate compiles expectOutput and the retry's condition and binds the
// result's name.
func (s *ScriptOp) Validate(c Checker) {
	s.expect = c.Regexp(s.ExpectOutput, "expectOutput")
	c.BindType(s.Bind, commandResultType, "bind")
	s.Retry.validate(c, s.ExpectError)
}

// Exec runs the command with KUBECONFIG, KUBECTL (kubectl of the
// kubelab binary), KUBELAB_CLUSTER (the cluster's name) and
// KUBELAB_BACKEND (embedded, docker) set, and, on a backend whose etcd
// this machine reaches, ETCDCTL (etcdctl of the kubelab binary) with the
// ETCDCTL_* variables that point it at the members.
func (s *ScriptOp) Exec(ctx context.Context, env Env) (string, error) {
	return runCommand(ctx, env, command{what: s.Command, expectError: s.ExpectError, expect: s.expect, bind: s.Bind, retry: s.Retry},
		func(ctx context.Context) *exec.Cmd {
			cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
			c := env.Cluster()
			cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Access().Kubeconfig, "KUBECTL="+strings.Join(kubectl(env), " "),
				"KUBELAB_CLUSTER="+c.Topology().Name, "KUBELAB_BACKEND="+c.Name())
			if e, ok := c.Backend.(cluster.Etcdctler); ok {
				cmd.Env = append(cmd.Env, "ETCDCTL="+strings.Join(binaries.EtcdctlOf(env.Binary()), " "))
				for k, v := range e.EtcdctlEnv() {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			return cmd
		})
}

// Needs of a script: etcd, when it runs $ETCDCTL; running containers,
// when it runs $KUBECTL (or kubectl) exec, logs, attach, cp or
// port-forward.
func (s *ScriptOp) Needs() []cluster.Capability {
	var out []cluster.Capability
	if etcdctlRE.MatchString(s.Command) {
		out = append(out, cluster.CapEtcdRaft)
	}
	if containersRE.MatchString(s.Command) {
		out = append(out, cluster.CapContainers)
	}
	return out
}

// Needs of a kubectl command: running containers, for exec, logs, attach,
// cp and port-forward.
func (k *KubectlOp) Needs() []cluster.Capability {
	for i := 0; i < len(k.Args); i++ {
		a := k.Args[i]
		switch {
		case slices.Contains(valueFlags, a):
			i++ // a global flag before the command, and its value
		case strings.HasPrefix(a, "-"):
		case slices.Contains(containerVerbs, a):
			return []cluster.Capability{cluster.CapContainers}
		default:
			return nil
		}
	}
	return nil
}

// containerVerbs are the kubectl commands that reach a running container.
var containerVerbs = []string{"exec", "logs", "attach", "cp", "port-forward"}

// valueFlags are kubectl's global flags that take their value as the
// next argument.
var valueFlags = []string{"-n", "--namespace", "--context", "--cluster", "--user", "-s", "--server", "--kubeconfig", "--as"}

// etcdctlRE finds a script's use of $ETCDCTL (or ${ETCDCTL}).
var etcdctlRE = regexp.MustCompile(`\$\{?ETCDCTL\b`)

// containersRE finds a script's kubectl command that reaches a running
// container.
var containersRE = regexp.MustCompile(`(\$\{?KUBECTL\}?|\bkubectl)\s+(` + strings.Join(containerVerbs, "|") + `)\b`)

// Retry makes a command run again, backing off (100ms doubling to 2s),
// until an attempt passes or the timeout ends: for what the apiservers
// learn through informers (RBAC bindings, admission policies) or
// controllers do in their own time. An attempt passes when the command's
// own checks pass (expectError or exitCode, expectOutput) and until, when
// set, holds.
type Retry struct {
	Until    string           `yaml:"until,omitempty"`
	ExitCode *int             `yaml:"exitCode,omitempty"`
	Timeout  cluster.Duration `yaml:"timeout,omitempty"`

	until *assertions.Compiled
}

// defaultRetryTimeout bounds retries that set no timeout.
const defaultRetryTimeout = 30 * time.Second

func (r *Retry) duration() time.Duration {
	switch {
	case r == nil:
		return 0
	case r.Timeout.Duration > 0:
		return r.Timeout.Duration
	}
	return defaultRetryTimeout
}

func (r *Retry) validate(c Checker, expectError bool) {
	if r == nil {
		return
	}
	if r.ExitCode != nil && expectError {
		c.Errorf("retry.exitCode", "set exitCode or expectError, not both: exitCode says which exit status passes")
	}
	if r.Until == "" && r.ExitCode == nil {
		c.Errorf("retry", "want until (an expression) or exitCode: what makes an attempt pass")
	}
	r.until = c.Expr(r.Until, "retry.until", true)
}

// command is what runCommand needs of a kubectl or script operation.
type command struct {
	what        string
	expectError bool
	expect      *regexp.Regexp
	bind        string
	retry       *Retry
}

// runCommand runs the command that mk makes once, or, with retry, until
// an attempt passes; each attempt's result is bound to bind (when set).
func runCommand(ctx context.Context, env Env, c command, mk func(context.Context) *exec.Cmd) (string, error) {
	if c.retry == nil {
		return c.attempt(ctx, env, mk, 1)
	}
	rctx, cancel := context.WithTimeout(ctx, c.retry.duration())
	defer cancel()
	start, backoff := time.Now(), 100*time.Millisecond
	var last error
	for n := 1; ; n++ {
		text, err := c.attempt(rctx, env, mk, n)
		if err == nil {
			if n > 1 {
				text = strings.TrimPrefix(text+fmt.Sprintf("\n(passed at attempt %d, after %s)", n, time.Since(start).Round(10*time.Millisecond)), "\n")
			}
			return text, nil
		}
		if rctx.Err() == nil || last == nil {
			last = err // an attempt the deadline cut short says less than the one before
		}
		if err := Sleep(rctx, backoff); err != nil {
			return text, fmt.Errorf("%s: no attempt passed in %s (%d attempts); the last: %w",
				c.what, time.Since(start).Round(10*time.Millisecond), n, errors.Join(last, err))
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// attempt runs the command once, the nth time, and checks its outcome.
func (c command) attempt(ctx context.Context, env Env, mk func(context.Context) *exec.Cmd, n int) (string, error) {
	res, text, err := capture(mk(ctx))
	// An attempt the retry's deadline cut short has no result of its own
	// (killed, exit code -1): the one before it stays bound.
	cut := ctx.Err() != nil && res.ExitCode == -1
	if c.bind != "" && (!cut || n == 1) {
		env.Bind(c.bind, res)
	}
	if r := c.retry; r != nil && r.ExitCode != nil {
		if res.ExitCode != *r.ExitCode {
			return text, fmt.Errorf("%s: exit code %d, want %d; output:\n%s", c.what, res.ExitCode, *r.ExitCode, text)
		}
		err = nil // the exit code was checked
		if c.expect != nil && !c.expect.MatchString(text) {
			return text, fmt.Errorf("%s: output does not match /%s/; output:\n%s", c.what, c.expect, text)
		}
	} else if err := checkCommand(c.what, text, err, c.expectError, c.expect); err != nil {
		return text, err
	}
	if r := c.retry; r != nil && r.until != nil {
		ok, err := assertions.Holds(ctx, r.until, env.View(), env.Bindings())
		if !ok {
			why := ""
			if err != nil {
				why = ": " + err.Error()
			}
			obs := assertions.String(assertions.Explain(context.WithoutCancel(ctx), r.until, env.View(), env.Bindings()))
			return text, fmt.Errorf("%s: until %s does not hold%s\nobserved:\n%s", c.what, r.until.Source, why, strings.TrimRight(obs, "\n"))
		}
	}
	return text, nil
}

var commandResultType = reflect.TypeFor[assertions.CommandResult]()

// capture runs cmd, keeping stdout and stderr apart for the result and
// together, in the order written, for people.
func capture(cmd *exec.Cmd) (assertions.CommandResult, string, error) {
	var stdout, stderr, combined bytes.Buffer
	cmd.Stdout = io.MultiWriter(&stdout, &combined)
	cmd.Stderr = io.MultiWriter(&stderr, &combined)
	if cmd.SysProcAttr == nil && cmd.Cancel != nil {
		// Its own process group, killed whole at the deadline: a script's
		// children (a sleep, a kubectl --watch) go with its shell instead
		// of running on after the operation failed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	if cmd.WaitDelay == 0 {
		// Killed at its deadline, a script's shell goes at once, but a
		// child it started (a sleep) may hold its output open: give up on
		// that output a second later rather than when the child ends.
		cmd.WaitDelay = time.Second
	}
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited 0; a child it left running kept its output open
	}
	res := assertions.CommandResult{
		Stdout: strings.TrimRight(stdout.String(), "\n"),
		Stderr: strings.TrimRight(stderr.String(), "\n"),
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		res.ExitCode = -1
	}
	res.JSON = parseJSON(stdout.Bytes())
	return res, strings.TrimRight(combined.String(), "\n"), err
}

// parseJSON is a command's output parsed as JSON when it is a JSON object
// or list (kubectl -o json), nil otherwise.
func parseJSON(out []byte) any {
	out = bytes.TrimSpace(out)
	if len(out) == 0 || (out[0] != '{' && out[0] != '[') {
		return nil
	}
	var v any
	if json.Unmarshal(out, &v) != nil {
		return nil
	}
	return v
}

func checkCommand(what, text string, err error, expectError bool, expect *regexp.Regexp) error {
	switch {
	case expectError && err == nil:
		return fmt.Errorf("%s succeeded, expected it to fail; output:\n%s", what, text)
	case !expectError && err != nil:
		return fmt.Errorf("%s: %w; output:\n%s", what, err, text)
	case expect != nil && !expect.MatchString(text):
		return fmt.Errorf("%s: output does not match /%s/; output:\n%s", what, expect, text)
	}
	return nil
}
