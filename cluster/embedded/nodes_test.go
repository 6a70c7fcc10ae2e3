package embedded

import (
	"errors"
	"strings"
	"testing"

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
