package ops

import (
	"context"
	"errors"
	"slices"
	"testing"

	"kubelab.dev/kubelab/assertions"
)

// nodeView shows worker-1 tainted from its nth look on.
type nodeView struct {
	View
	looks, nth int
}

func (v *nodeView) Node(_ context.Context, name string) (assertions.Node, error) {
	v.looks++
	n := assertions.Node{Name: name, Exists: true}
	if v.looks >= v.nth {
		n.Taints = []assertions.Taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}}
	}
	return n, nil
}

func TestNodeSeenWaitsForTheView(t *testing.T) {
	tainted := func(n assertions.Node) bool {
		return slices.Contains(n.Taints, assertions.Taint{Key: "dedicated", Value: "db", Effect: "NoSchedule"})
	}
	v := &nodeView{nth: 4}
	if err := nodeSeen(t.Context(), v, "worker-1", tainted); err != nil {
		t.Fatal(err)
	}
	if v.looks != 4 {
		t.Errorf("looked %d times, want 4: until the view showed the taint, and no more", v.looks)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := nodeSeen(ctx, &nodeView{nth: 1 << 30}, "worker-1", tainted); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: got %v, want context.Canceled", err)
	}
}
