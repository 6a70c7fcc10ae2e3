package ops

import (
	"context"
	"regexp"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
)

func init() {
	Register("nodeExec", "{node: worker-1, command: [curl, -s, http://10.96.0.1:443]}", func(n *NodeExecOp) Op { return n })
}

// NodeExecOp runs a command inside a real node (its network namespace,
// its iptables, its containerd): what a `docker exec` into a kind node
// does. The docker backend only; a lab using it is refused on simulated
// nodes before anything boots.
type NodeExecOp struct {
	Node         string   `yaml:"node"`
	Command      []string `yaml:"command"`
	ExpectError  bool     `yaml:"expectError,omitempty"`
	ExpectOutput string   `yaml:"expectOutput,omitempty"`
	Bind         string   `yaml:"bind,omitempty"`
	ReadsOnly    bool     `yaml:"readOnly,omitempty"`

	expect *regexp.Regexp
}

// Binding is the name the result is bound to.
func (n *NodeExecOp) Binding() (name, field string) { return n.Bind, "bind" }

// Summary shows the node and the command.
func (n *NodeExecOp) Summary() string { return "on " + n.Node + ": " + strings.Join(n.Command, " ") }

// DefaultTimeout is that of a command.
func (n *NodeExecOp) DefaultTimeout() time.Duration { return slowTimeout }

// Validate checks the node and compiles expectOutput.
func (n *NodeExecOp) Validate(c Checker) {
	c.Node(n.Node, "node")
	if len(n.Command) == 0 {
		c.Errorf("command", "want a command to run, e.g. [curl, -s, http://web]")
	}
	n.expect = c.Regexp(n.ExpectOutput, "expectOutput")
	c.BindType(n.Bind, commandResultType, "bind")
}

// Exec runs the command in the node.
func (n *NodeExecOp) Exec(ctx context.Context, env Env) (string, error) {
	out, err := env.Cluster().NodeExec(ctx, n.Node, n.Command...)
	text := strings.TrimRight(out, "\n")
	if n.Bind != "" {
		res := commandResult(text, err)
		env.Bind(n.Bind, res)
	}
	return text, checkCommand(n.Summary(), text, err, n.ExpectError, n.expect)
}

// commandResult is the result of a command that ran elsewhere (its
// output only, stdout and stderr together).
func commandResult(out string, err error) assertions.CommandResult {
	res := assertions.CommandResult{Stdout: out, JSON: parseJSON([]byte(out))}
	if err != nil {
		res.ExitCode = 1
	}
	return res
}
