package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// LogOptions says which part of a component's output to read.
type LogOptions struct {
	// Tail is how many of the last lines to start from; 0 or less: all.
	Tail int
	// Follow goes on with what the component writes next, until ctx ends.
	Follow bool
}

// ComponentLogger is a backend that keeps the output of the components it
// runs (stdout and stderr: their klog lines, panics, the reason one
// exited), across their restarts. A name NODE/DAEMON (worker-1/kubelet)
// is a daemon inside a real node.
type ComponentLogger interface {
	// ComponentLog streams the output of the named component.
	ComponentLog(ctx context.Context, name string, o LogOptions) (io.ReadCloser, error)
}

// ErrNoLog says a backend keeps no output of a component: a simulated
// node, or a cluster kubelab did not create.
var ErrNoLog = errors.New("no log of its own")

// ErrNoComponent says a cluster has no component of the name asked for.
var ErrNoComponent = errors.New("no such component")

// ComponentLog streams the output of the named component (see
// ComponentLogger).
func (c *Cluster) ComponentLog(ctx context.Context, name string, o LogOptions) (io.ReadCloser, error) {
	l, err := c.logger(name)
	if err != nil {
		return nil, err
	}
	base := name
	if node, daemon, ok := SplitNodeDaemon(name); ok {
		if !KnownDaemon(daemon) {
			return nil, fmt.Errorf("logs: %w %q: a node's daemons are %s", ErrNoComponent, name, strings.Join(NodeDaemons, ", "))
		}
		base = node
	}
	if cs, err := c.Components(ctx); err == nil && !slices.ContainsFunc(cs, func(x Component) bool { return x.Name == base }) {
		names := make([]string, len(cs))
		for i, x := range cs {
			names[i] = x.Name
		}
		return nil, fmt.Errorf("logs: %w %q in this cluster; its components: %s", ErrNoComponent, base, strings.Join(names, ", "))
	}
	return l.ComponentLog(ctx, name, o)
}

// logger is the backend's ComponentLogger, or why there is none.
func (c *Cluster) logger(name string) (ComponentLogger, error) {
	l, ok := c.Backend.(ComponentLogger)
	if !ok {
		return nil, fmt.Errorf("logs of %s: the %s backend runs no component of its own (kubectl logs -n kube-system reads the pods of a cluster's control plane): %w", name, c.Name(), ErrNoLog)
	}
	return l, nil
}

// LogTail returns the last n lines of the named component's output. It
// does not list the components first, as ComponentLog does to name them
// in its error: its callers (ExitedTails) have them already.
func (c *Cluster) LogTail(ctx context.Context, name string, n int) (string, error) {
	l, err := c.logger(name)
	if err != nil {
		return "", err
	}
	rc, err := l.ComponentLog(ctx, name, LogOptions{Tail: n})
	if err != nil {
		return "", err
	}
	defer rc.Close()
	return LastLines(rc, n)
}

// LastLines reads r to its end and returns its last n lines (each ending
// in a newline).
func LastLines(r io.Reader, n int) (string, error) {
	if n <= 0 {
		return "", nil
	}
	ring := make([]string, 0, n)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if len(ring) == n {
			ring = append(ring[:0], ring[1:]...)
		}
		ring = append(ring, sc.Text())
	}
	if len(ring) == 0 {
		return "", sc.Err()
	}
	return strings.Join(ring, "\n") + "\n", sc.Err()
}

// ExitedTails describes the components that exited on their own (not
// stopped or killed on purpose), each with the last n lines of its
// output: a component that died explains most waits that never ended,
// so a failed step or scenario shows them. "" when none did.
func (c *Cluster) ExitedTails(ctx context.Context, n int) string {
	cs, err := c.Components(ctx)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, x := range cs {
		if x.State != StateExited {
			continue
		}
		how := ""
		if x.Exit != "" {
			how = " (" + x.Exit + ")"
		}
		tail, err := c.LogTail(ctx, x.Name, n)
		if err != nil || tail == "" {
			fmt.Fprintf(&b, "%s exited on its own%s.\n", x.Name, how)
			continue
		}
		fmt.Fprintf(&b, "%s exited on its own%s; the last lines it wrote:\n%s", x.Name, how, indent(tail))
	}
	return strings.TrimRight(b.String(), "\n")
}

// indent puts two spaces before each line of s.
func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("  " + line)
	}
	return b.String()
}
