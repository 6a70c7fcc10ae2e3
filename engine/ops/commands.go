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
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
)

func init() {
	Register("kubectl", "{args: [get, nodes], expectOutput: worker-1}", func(k *KubectlOp) Operation { return k })
	Register("script", "{command: 'test -n \"$KUBECONFIG\"'}", func(s *ScriptOp) Operation { return s })
}

// KubectlOp runs kubectl.
type KubectlOp struct {
	// Args are kubectl's arguments, without "kubectl".
	Args []string `json:"args" yaml:"args" jsonschema:"minItems=1"`
	// ExpectError makes the operation succeed only if kubectl fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// Namespace passed as --namespace.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// ExpectOutput is a regular expression the combined output must match
	// (RE2 syntax), e.g. "410|Gone" or "^no$".
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`
	// Bind names the result for later expressions: NAME.stdout,
	// NAME.stderr, NAME.exitCode and NAME.json (stdout parsed, with -o
	// json). It is bound even when the operation fails.
	Bind string `json:"bind,omitempty" yaml:"bind,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`

	expect *regexp.Regexp
}

// Binding is the name the result is bound to.
func (k *KubectlOp) Binding() (name, field string) { return k.Bind, "bind" }

// Summary shows the command line.
func (k *KubectlOp) Summary() string { return "kubectl " + strings.Join(k.Args, " ") }

// DefaultTimeout is that of a command.
func (k *KubectlOp) DefaultTimeout() time.Duration { return slowTimeout }

// Validate checks the arguments and compiles expectOutput.
func (k *KubectlOp) Validate(c Checker) {
	if k.Args != nil && len(k.Args) == 0 {
		c.Errorf("args", "want at least one argument")
	}
	k.expect = c.Regexp(k.ExpectOutput, "expectOutput")
	c.BindType(k.Bind, commandResultType, "bind")
}

// Exec runs the built-in kubectl against the lab cluster.
func (k *KubectlOp) Exec(ctx context.Context, env Env) (string, error) {
	args := append([]string{"kubectl"}, k.Args...)
	if k.Namespace != "" {
		args = append(args, "--namespace", k.Namespace)
	}
	cmd := exec.CommandContext(ctx, env.Binary(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig)
	return runCommand(cmd, env, "kubectl "+strings.Join(k.Args, " "), k.ExpectError, k.expect, k.Bind)
}

// ScriptOp runs a shell command.
type ScriptOp struct {
	// Command is run by sh -c.
	Command string `json:"command" yaml:"command" jsonschema:"minLength=1"`
	// ExpectError makes the operation succeed only if the command fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// ExpectOutput is a regular expression the combined output must match.
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`
	// Bind names the result for later expressions: NAME.stdout,
	// NAME.stderr, NAME.exitCode and NAME.json (stdout parsed, when it is
	// JSON). It is bound even when the operation fails.
	Bind string `json:"bind,omitempty" yaml:"bind,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`

	expect *regexp.Regexp
}

// Binding is the name the result is bound to.
func (s *ScriptOp) Binding() (name, field string) { return s.Bind, "bind" }

// Summary shows the command.
func (s *ScriptOp) Summary() string { return "script " + s.Command }

// DefaultTimeout is that of a command.
func (s *ScriptOp) DefaultTimeout() time.Duration { return slowTimeout }

// Validate compiles expectOutput and binds the result's name.
func (s *ScriptOp) Validate(c Checker) {
	s.expect = c.Regexp(s.ExpectOutput, "expectOutput")
	c.BindType(s.Bind, commandResultType, "bind")
}

// Exec runs the command with KUBECONFIG and KUBECTL set.
func (s *ScriptOp) Exec(ctx context.Context, env Env) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig, "KUBECTL="+env.Binary()+" kubectl")
	return runCommand(cmd, env, s.Command, s.ExpectError, s.expect, s.Bind)
}

var commandResultType = reflect.TypeFor[assertions.CommandResult]()

// runCommand runs cmd, binds its result to bind (when set) and checks the
// outcome: the exit status against expectError, the combined output
// against expect.
func runCommand(cmd *exec.Cmd, env Env, what string, expectError bool, expect *regexp.Regexp, bind string) (string, error) {
	res, text, err := capture(cmd)
	if bind != "" {
		env.Bind(bind, res)
	}
	return text, checkCommand(what, text, err, expectError, expect)
}

// capture runs cmd, keeping stdout and stderr apart for the result and
// together, in the order written, for people.
func capture(cmd *exec.Cmd) (assertions.CommandResult, string, error) {
	var stdout, stderr, combined bytes.Buffer
	cmd.Stdout = io.MultiWriter(&stdout, &combined)
	cmd.Stderr = io.MultiWriter(&stderr, &combined)
	err := cmd.Run()
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
	if out := bytes.TrimSpace(stdout.Bytes()); len(out) > 0 && (out[0] == '{' || out[0] == '[') {
		var v any
		if json.Unmarshal(out, &v) == nil {
			res.JSON = v
		}
	}
	return res, strings.TrimRight(combined.String(), "\n"), err
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
