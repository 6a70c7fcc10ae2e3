package load

import (
	"fmt"
	"iter"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// exprNeeds maps the environment's names that only some backends can
// evaluate to the capability they need.
var exprNeeds = map[string]cluster.Capability{
	"raft":       cluster.CapEtcdRaft,
	"audit":      cluster.CapAuditLog,
	"trace":      cluster.CapAuditLog,
	"scheduling": cluster.CapSchedulingLog,
	"iptables":   cluster.CapNodeInternals,
	"cri":        cluster.CapNodeInternals,
}

// kindNeeds maps operation kinds to the capability they need.
var kindNeeds = map[string]cluster.Capability{
	"kill": cluster.CapComponentFaults, "stop": cluster.CapComponentFaults,
	"start": cluster.CapComponentFaults, "restart": cluster.CapComponentFaults,
	"pause": cluster.CapComponentFaults, "resume": cluster.CapComponentFaults,
	"partition": cluster.CapPartitions, "heal": cluster.CapPartitions,
	"nodeDown": cluster.CapNodeDown, "nodeUp": cluster.CapNodeDown,
	"snapshot": cluster.CapEtcdSnapshots, "restore": cluster.CapEtcdSnapshots,
	"nodeExec": cluster.CapNodeInternals,
}

// Needs is what the lab needs of its backend beyond the Kubernetes API,
// inferred from its operations and expressions: capability -> the first
// thing that needs it, with its line ("kill etcd-leader at line 31").
func (l *Lab) Needs() map[cluster.Capability]string { return NeedsOf(l.File(), l.Operations()) }

// NeedsOf is what the operations of a file need of its backend:
// capability -> the first operation that needs it, with its line.
func NeedsOf(file string, all iter.Seq2[string, *ops.Operation]) map[cluster.Capability]string {
	out := map[cluster.Capability]string{}
	for _, op := range all {
		for k, why := range OperationNeeds(op) {
			if _, seen := out[k]; !seen {
				out[k] = fmt.Sprintf("%s at %s:%d", why, file, op.Pos().Line)
			}
		}
	}
	return out
}

// OperationNeeds is what one operation needs of its backend: capability ->
// what needs it.
func OperationNeeds(o *ops.Operation) map[cluster.Capability]string {
	out := map[cluster.Capability]string{}
	if k, ok := kindNeeds[o.Kind()]; ok {
		out[k] = o.Summary()
	}
	if t, ok := o.Spec().(*ops.TargetOp); ok {
		if _, _, inNode := cluster.SplitNodeDaemon(t.Target); inNode {
			// A daemon inside a node is no control-plane component: the
			// backend needs real nodes to reach it.
			delete(out, cluster.CapComponentFaults)
			out[cluster.CapNodeInternals] = o.Summary()
		}
	}
	if c := o.Compiled(); c != nil {
		for _, name := range c.NeedsAny(exprNames()...) {
			if _, seen := out[exprNeeds[name]]; !seen {
				out[exprNeeds[name]] = name + "()"
				if name == "raft" {
					out[exprNeeds[name]] = name
				}
			}
		}
	}
	return out
}

func exprNames() []string {
	out := make([]string, 0, len(exprNeeds))
	for k := range exprNeeds {
		out = append(out, k)
	}
	return out
}

// CheckBackend refuses a lab its backend cannot run, before anything
// runs: the error (a *cluster.MissingError) names each missing capability
// and what in the lab needs it.
func (l *Lab) CheckBackend(b cluster.Backend) error {
	if err := cluster.CheckCapabilities(b, l.Needs()); err != nil {
		return fmt.Errorf("lab %s: %w", l.Metadata.Name, err)
	}
	return nil
}
