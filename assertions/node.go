package assertions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	obs "kubelab.dev/kubelab/observe"
)

// IPTables is a node's nat table: see observe.IPTables.
type IPTables = obs.IPTables

// CRI is a node's sandboxes and containers: see observe.CRI.
type CRI = obs.CRI

// IPTables implements View: iptables-save in the node.
func (l *Live) IPTables(ctx context.Context, node string) (IPTables, error) {
	out, err := l.c.NodeExec(ctx, node, "iptables-save", "-t", "nat")
	if err != nil {
		return obs.ParseIPTables(""), fmt.Errorf("iptables(%q): %w", node, err)
	}
	return obs.ParseIPTables(out), nil
}

// CRI implements View: kubelab's CRI client in the node, asking its
// containerd what the kubelet asked it to run.
func (l *Live) CRI(ctx context.Context, node string) (CRI, error) {
	var c CRI
	out, err := l.c.NodeExec(ctx, node, "kubelab", "component", "cri")
	if err != nil {
		return c, fmt.Errorf("cri(%q): %w", node, err)
	}
	// The JSON is the last line; a client library may log before it.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &c); err != nil {
		return c, fmt.Errorf("cri(%q): read the runtime's answer: %w", node, err)
	}
	return c, nil
}
