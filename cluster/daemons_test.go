package cluster

import (
	"context"
	"strings"
	"testing"
)

// nodesOnly is a backend whose components are a scheduler and two nodes.
type nodesOnly struct{ Backend }

func (nodesOnly) Components(context.Context) ([]Component, error) {
	return []Component{{Name: "kube-scheduler-1", Role: RoleScheduler},
		{Name: "worker-1", Role: RoleNode}, {Name: "worker-2", Role: RoleNode}}, nil
}

func TestResolveNodeDaemon(t *testing.T) {
	c := New(nodesOnly{}, nil)
	for _, tc := range []struct{ target, want, err string }{
		{target: "worker-2/kubelet", want: "worker-2/kubelet"},
		{target: "worker-1/containerd", want: "worker-1/containerd"},
		{target: "worker-1/kube-proxy", want: "worker-1/kube-proxy"},
		{target: "worker-1", want: "worker-1"},
		{target: "worker-3/kubelet", err: `no node "worker-3" for worker-3/kubelet (the nodes are worker-1, worker-2)`},
		{target: "kube-scheduler-1/kubelet", err: `no node "kube-scheduler-1"`},
		{target: "worker-1/kubelt", err: `no daemon "kubelt" inside a node (want containerd, kubelet, kube-proxy)`},
		{target: "worker-1/", err: `no daemon ""`},
	} {
		got, err := c.Resolve(t.Context(), tc.target)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.target, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Resolve(%q) = %q, %v; want an error with %q", tc.target, got, err, tc.err)
		}
	}
}

func TestSplitNodeDaemon(t *testing.T) {
	if n, d, ok := SplitNodeDaemon("worker-2/kube-proxy"); !ok || n != "worker-2" || d != "kube-proxy" {
		t.Errorf("SplitNodeDaemon(worker-2/kube-proxy) = %q, %q, %v", n, d, ok)
	}
	if _, _, ok := SplitNodeDaemon("worker-2"); ok {
		t.Error("SplitNodeDaemon(worker-2) says it names a daemon")
	}
	if KnownDaemon("kube-apiserver") || !KnownDaemon(DaemonContainerd) {
		t.Error("KnownDaemon is wrong about kube-apiserver or containerd")
	}
}
