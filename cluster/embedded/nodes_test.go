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
