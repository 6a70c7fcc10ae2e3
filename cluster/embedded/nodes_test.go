package embedded

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"

	"kubelab.dev/kubelab/cluster"
)

// TestNodeDaemonsAreRefused: kwok nodes run no kubelet, containerd or
// kube-proxy; a fault on one says so (the loader refuses such labs first).
func TestNodeDaemonsAreRefused(t *testing.T) {
	b := &Backend{name: "x", st: &state{}}
	err := b.Act(t.Context(), "worker-1/kubelet", cluster.Kill)
	if !errors.Is(err, cluster.ErrNoNodeInternals) || !strings.Contains(err.Error(), "kill worker-1/kubelet: node worker-1 is simulated") {
		t.Errorf("kill worker-1/kubelet = %v, want a refusal that wraps ErrNoNodeInternals", err)
	}
}

// TestNodeTTL: the annotation nodes register with is the one the TTL
// controller settles on for the cluster's size (its boundaries are
// inclusive upper bounds).
func TestNodeTTL(t *testing.T) {
	for n, want := range map[int]int{1: 0, 100: 0, 101: 15, 500: 15, 501: 30, 1000: 30, 1001: 60, 2000: 60, 2001: 300} {
		if got := nodeTTL(n); got != want {
			t.Errorf("nodeTTL(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestRegisteredNodesNeedNoInitialPatch: a node registers with the status
// kwok's node-initialize stage would write, so kwok's own stages (those
// the cluster runs, kwok-stages.yaml) find nothing to initialize and only
// heartbeat it.
func TestRegisteredNodesNeedNoInitialPatch(t *testing.T) {
	objs, err := kwokconfig.Load(t.Context(), "kwok-stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var nodeStages []*internalversion.Stage
	for _, s := range kwokconfig.FilterWithType[*internalversion.Stage](objs) {
		if s.Spec.ResourceRef.Kind == "Node" {
			nodeStages = append(nodeStages, s)
		}
	}
	lc, err := lifecycle.NewLifecycle(nodeStages)
	if err != nil {
		t.Fatal(err)
	}
	status := func(st corev1.NodeStatus) []string {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}, Status: st}
		stages, err := lc.ListAllPossible(t.Context(), &lifecycle.Event{Data: node})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range stages {
			names = append(names, s.Name())
		}
		return names
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	if got := status(registeredStatus(metav1.Now(), capacity, "10.89.0.10", "worker-1")); !slices.Equal(got, []string{"node-heartbeat-with-lease"}) {
		t.Errorf("kwok stages for a registered node: %v, want only its heartbeat", got)
	}
	// The test tells: a node without that status is one kwok initializes.
	if got := status(corev1.NodeStatus{Capacity: capacity}); !slices.Equal(got, []string{"node-initialize"}) {
		t.Errorf("kwok stages for a node without status: %v, want node-initialize", got)
	}
}
