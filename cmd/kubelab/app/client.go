package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/embedded"
)

// ClientCall is a `kubelab [--name N] [--home H] kubectl|etcdctl [--name N]
// [--home H] ARGS...` invocation: kubelab's own flags may come before or
// right after the tool's name; everything else is the tool's.
type ClientCall struct {
	Tool       string
	Name, Home string
	// Explicit is true when the cluster was named by --name.
	Explicit bool
	Args     []string
}

// ParseClientCall recognizes a kubectl or etcdctl invocation in args
// (without the program name). ok is false for anything else.
func ParseClientCall(args []string) (c ClientCall, ok bool) {
	c = ClientCall{Name: envOr("KUBELAB_NAME", "kubelab"), Home: string(embedded.DefaultHome())}
	rest, ok := c.leadingFlags(args)
	if !ok || len(rest) == 0 || (rest[0] != "kubectl" && rest[0] != "etcdctl") {
		return c, false
	}
	c.Tool = rest[0]
	if c.Args, ok = c.leadingFlags(rest[1:]); !ok {
		return c, false
	}
	// "kubelab kubectl -- get pods", as minikube's kubectl wants it: the
	// separator ends kubelab's flags, it is not the tool's.
	if len(c.Args) > 0 && c.Args[0] == "--" {
		c.Args = c.Args[1:]
	}
	return c, true
}

// AsksForHelp reports whether the call only asks the tool for its help
// (no arguments, "help" first, or -h/--help before any "--"), which needs
// no cluster.
func (c ClientCall) AsksForHelp() bool {
	if len(c.Args) == 0 || c.Args[0] == "help" {
		return true
	}
	for _, a := range c.Args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// leadingFlags consumes --name, --home and -v/--verbose at the start of
// args; ok is false when one lacks its value.
func (c *ClientCall) leadingFlags(args []string) ([]string, bool) {
	for len(args) > 0 {
		a := args[0]
		var flag, val string
		switch {
		case a == "-v" || a == "--verbose":
			args = args[1:]
			continue
		case a == "--name" || a == "--home":
			if len(args) < 2 {
				return nil, false
			}
			flag, val, args = a, args[1], args[2:]
		case strings.HasPrefix(a, "--name=") || strings.HasPrefix(a, "--home="):
			flag, val, _ = strings.Cut(a, "=")
			val, args = a[len(flag)+1:], args[1:]
		default:
			return args, true
		}
		if flag == "--name" {
			c.Name, c.Explicit = val, true
		} else {
			c.Home = val
		}
	}
	return args, true
}

// Env returns the environment that points the tool at the named cluster,
// on either backend. It leaves an explicit KUBECONFIG (or kubectl's
// --kubeconfig) alone. When no --name was given, no cluster has the
// default name and exactly one embedded cluster exists, that one is
// used; with none, it fails saying how to start one.
func (c ClientCall) Env() (map[string]string, error) {
	env := map[string]string{}
	if c.Tool == "kubectl" && !c.Explicit && (os.Getenv("KUBECONFIG") != "" || c.namesKubeconfig()) {
		return env, nil
	}
	g := &globals{name: c.Name, home: c.Home}
	ctx := context.Background()
	b, err := openBackend(ctx, g)
	if err != nil && !c.Explicit {
		if names, lerr := embedded.Home(c.Home).Clusters(); lerr == nil && len(names) == 1 {
			g.name = names[0]
			b, err = openBackend(ctx, g)
		}
	}
	if err != nil {
		// Never kubectl's own fallback: with no kubelab cluster it would
		// read ~/.kube/config and act on whatever cluster that names.
		return nil, err
	}
	acc := b.Access()
	switch c.Tool {
	case "kubectl":
		env["KUBECONFIG"] = acc.Kubeconfig
	case "etcdctl":
		if e, ok := b.(cluster.Etcdctler); ok {
			env = e.EtcdctlEnv()
		}
	}
	return env, nil
}

// namesKubeconfig reports whether kubectl's own --kubeconfig flag comes
// before any "--": the caller chose the cluster.
func (c ClientCall) namesKubeconfig() bool {
	for _, a := range c.Args {
		if a == "--" {
			return false
		}
		if a == "--kubeconfig" || strings.HasPrefix(a, "--kubeconfig=") {
			return true
		}
	}
	return false
}

// newClientCommand lists kubectl or etcdctl in --help. main runs them
// before the command line is parsed (their flags are theirs); this
// command is reached only when kubelab's own flags come in an order main
// does not recognize, and runs the tool as main would.
func newClientCommand(g *globals, tool, short string) *cobra.Command {
	return &cobra.Command{
		Use:                tool + " [--name NAME] ARGS...",
		Short:              short,
		Example:            fmt.Sprintf("  kubelab %s --name other %s", tool, map[string]string{"kubectl": "get nodes", "etcdctl": "endpoint status -w table"}[tool]),
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), self, append([]string{"--name", g.name, "--home", g.home, tool}, args...)...)
			c.Stdin, c.Stdout, c.Stderr = g.streams.In, g.streams.Out, g.streams.Err
			if err := c.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					return &ExitError{Code: ee.ExitCode(), Err: fmt.Errorf("%s: %w", tool, err), Silent: true}
				}
				return err
			}
			return nil
		},
	}
}
