package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"kubelab.dev/kubelab/cluster"
)

// writeKubeconfig writes a kubeconfig with one context and returns its path.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRecordRoundTrip: what Up records, Open reads back in another
// process: the run, its namespace and whether it owns it, the nodes to
// put back.
func TestRecordRoundTrip(t *testing.T) {
	kc, dir := writeKubeconfig(t), filepath.Join(t.TempDir(), "run")
	b, err := New(cluster.Topology{Name: "ex-1", Namespace: "default", Workers: 2}, Options{Kubeconfig: kc, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if b.RunNamespace() != "default" {
		t.Errorf("namespace %q, want the topology's", b.RunNamespace())
	}
	raw, err := b.load()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*raw, b.copy); err != nil {
		t.Fatal(err)
	}
	b.nodes = map[string]nodeState{"n1": {Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, Labels: map[string]string{"a": "b"}}}
	if err := b.save(); err != nil {
		t.Fatal(err)
	}
	o, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.run != "ex-1" || o.ns != "default" || o.ownNS || o.Topology().Workers != 2 || !reflect.DeepEqual(o.nodes, b.nodes) || o.cs == nil {
		t.Errorf("reopened run %+v, want %+v", o, b)
	}
	if names, err := Runs(filepath.Dir(dir)); err != nil || !reflect.DeepEqual(names, []string{"run"}) {
		t.Errorf("Runs = %v, %v", names, err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of an empty directory = %v, want ErrNotFound", err)
	}
}

// TestTopologyHonoured: node settings an existing cluster cannot have are
// refused before anything is made, and so is a namespace that is no DNS
// label.
func TestTopologyHonoured(t *testing.T) {
	kc := writeKubeconfig(t)
	for _, n := range []cluster.NodeSpec{
		{Name: "worker-1", Capacity: map[string]string{"cpu": "2"}},
		{Name: "worker-1", Taints: []cluster.Taint{{Key: "k", Effect: "NoSchedule"}}},
		{Name: "worker-1", Labels: map[string]string{"zone": "a"}},
	} {
		_, err := New(cluster.Topology{Name: "x", Nodes: []cluster.NodeSpec{n}}, Options{Kubeconfig: kc, Dir: t.TempDir()})
		if !errors.Is(err, cluster.ErrTopology) {
			t.Errorf("node %+v: New = %v, want ErrTopology", n, err)
		}
	}
	if _, err := New(cluster.Topology{Name: "x", Namespace: "Not_A_Label"}, Options{Kubeconfig: kc, Dir: t.TempDir()}); err == nil {
		t.Error("an invalid namespace was accepted")
	}
	nodes := []corev1.Node{{}, {}, {}}
	nodes[1].Spec.Unschedulable = true
	nodes[2].Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	if got := schedulable(nodes); got != 1 {
		t.Errorf("schedulable = %d, want 1 (one cordoned, one control plane)", got)
	}
	if got := wanted(cluster.Topology{}); got != 1 {
		t.Errorf("wanted of the default topology = %d", got)
	}
}
