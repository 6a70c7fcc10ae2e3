package kubeconfig

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRestoreNode(t *testing.T) {
	was := nodeState{Taints: []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}, Labels: map[string]string{"zone": "a"}}
	n := &corev1.Node{}
	n.Labels = map[string]string{"zone": "b", "lab": "x"}
	n.Spec.Unschedulable = true
	n.Spec.Taints = []corev1.Taint{
		{Key: "maintenance", Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	}
	if !restore(n, was) {
		t.Fatal("restore found nothing to change")
	}
	if n.Spec.Unschedulable || len(n.Spec.Taints) != 2 || n.Spec.Taints[0].Key != corev1.TaintNodeUnreachable || n.Spec.Taints[1].Key != "team" || len(n.Labels) != 1 || n.Labels["zone"] != "a" {
		t.Errorf("restored node: %+v %+v", n.Spec, n.Labels)
	}
	if restore(n, was) {
		t.Error("a restored node should need no change")
	}
}
