package cluster

import corev1 "k8s.io/api/core/v1"

// NodeUsable reports whether a node is Ready and the node lifecycle
// controller has taken off the taints it puts on a node that is not
// (node.kubernetes.io/not-ready and /unreachable). A node is Ready a
// moment before those taints go, and a Pod scheduled in that moment is
// refused by TaintToleration: a cluster is up when its nodes can take
// Pods. The taints a lab asks for stay, and do not count.
func NodeUsable(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return true
}
