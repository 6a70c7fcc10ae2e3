package ops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
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

	expect *regexp.Regexp
}

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
}

// Exec runs the built-in kubectl against the lab cluster.
func (k *KubectlOp) Exec(ctx context.Context, env Env) (string, error) {
	args := append([]string{"kubectl"}, k.Args...)
	if k.Namespace != "" {
		args = append(args, "--namespace", k.Namespace)
	}
	cmd := exec.CommandContext(ctx, env.Binary(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig)
	return runCommand(cmd, "kubectl "+strings.Join(k.Args, " "), k.ExpectError, k.expect)
}

// ScriptOp runs a shell command.
type ScriptOp struct {
	// Command is run by sh -c.
	Command string `json:"command" yaml:"command" jsonschema:"minLength=1"`
	// ExpectError makes the operation succeed only if the command fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// ExpectOutput is a regular expression the combined output must match.
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`

	expect *regexp.Regexp
}

// Summary shows the command.
func (s *ScriptOp) Summary() string { return "script " + s.Command }

// DefaultTimeout is that of a command.
func (s *ScriptOp) DefaultTimeout() time.Duration { return slowTimeout }

// Validate compiles expectOutput.
func (s *ScriptOp) Validate(c Checker) { s.expect = c.Regexp(s.ExpectOutput, "expectOutput") }

// Exec runs the command with KUBECONFIG and KUBECTL set.
func (s *ScriptOp) Exec(ctx context.Context, env Env) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster().Access().Kubeconfig, "KUBECTL="+env.Binary()+" kubectl")
	return runCommand(cmd, s.Command, s.ExpectError, s.expect)
}

func runCommand(cmd *exec.Cmd, what string, expectError bool, expect *regexp.Regexp) (string, error) {
	out, err := cmd.CombinedOutput()
	text := strings.TrimRight(string(out), "\n")
	switch {
	case expectError && err == nil:
		return text, fmt.Errorf("%s succeeded, expected it to fail; output:\n%s", what, text)
	case !expectError && err != nil:
		return text, fmt.Errorf("%s: %w; output:\n%s", what, err, text)
	case expect != nil && !expect.MatchString(text):
		return text, fmt.Errorf("%s: output does not match /%s/; output:\n%s", what, expect, text)
	}
	return text, nil
}
