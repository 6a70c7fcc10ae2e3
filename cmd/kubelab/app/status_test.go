package app

import (
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
)

// TestStatusListsControlPlaneNodes: a stacked cluster's status shows each
// control-plane node with its components and their states; an external
// one has no such section.
func TestStatusListsControlPlaneNodes(t *testing.T) {
	topo := cluster.Topology{Etcd: 3, Stacked: true}.WithDefaults()
	st := &Status{ControlPlaneNodes: topo.ControlPlaneNodes()}
	for i, n := range []string{"1", "2", "3"} {
		for _, c := range []string{"etcd-", "kube-apiserver-", "kube-controller-manager-", "kube-scheduler-"} {
			state := cluster.StateRunning
			if i == 1 {
				state = cluster.StateExited
			}
			st.Components = append(st.Components, cluster.Component{Name: c + n, State: state})
		}
	}
	var b strings.Builder
	if err := st.write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"CONTROL-PLANE NODES",
		"control-plane-2  etcd-2 (exited), kube-apiserver-2 (exited), kube-controller-manager-2 (exited), kube-scheduler-2 (exited)",
		"control-plane-3  etcd-3 (running), kube-apiserver-3 (running)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	st.ControlPlaneNodes = nil
	b.Reset()
	if err := st.write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "CONTROL-PLANE NODES") {
		t.Errorf("an external topology lists control-plane nodes:\n%s", b.String())
	}
}
