package load

import (
	"fmt"
	"iter"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// Needs is what the lab needs of its backend beyond the Kubernetes API,
// inferred from its operations and expressions, and from its cluster:
// capability -> the first thing that needs it, with its line ("kill
// etcd-leader at line 31").
func (l *Lab) Needs() map[cluster.Capability]string {
	out := NeedsOf(l.File(), l.Operations())
	for k, why := range TopologyNeeds(l.Spec.Cluster) {
		if _, seen := out[k]; !seen {
			out[k] = why
		}
	}
	return out
}

// TopologyNeeds is what a cluster's topology needs of its backend: a
// node's kube-proxy mode needs real nodes (simulated ones run no
// kube-proxy).
func TopologyNeeds(t cluster.Topology) map[cluster.Capability]string {
	out := map[cluster.Capability]string{}
	if i := t.ProxyModeNode(); i >= 0 {
		out[cluster.CapNodeInternals] = fmt.Sprintf("spec.cluster.nodes[%d].proxyMode %s (kube-proxy runs on real nodes)", i, t.Nodes[i].ProxyMode)
	}
	return out
}

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
// what needs it (the operation answers for itself: ops.Operation.Needs).
func OperationNeeds(o *ops.Operation) map[cluster.Capability]string { return o.Needs() }

// CheckBackend refuses a lab its backend cannot run, before anything
// runs: the error (a *cluster.MissingError) names each missing capability
// and what in the lab needs it.
func (l *Lab) CheckBackend(b cluster.Backend) error {
	if err := cluster.CheckCapabilities(b, l.Needs()); err != nil {
		return fmt.Errorf("lab %s: %w", l.Metadata.Name, err)
	}
	return nil
}
