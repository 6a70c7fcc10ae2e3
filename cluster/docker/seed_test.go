package docker

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/seed/seedtest"
)

// TestDockerSeededClusterIsTheFreshOne boots a docker cluster from nothing
// (which takes the seed), then one from the seed, and compares every API
// object of the two (cluster/seed/seedtest). The seed is stored without
// what named the apiserver that took it: the seeded cluster's kubernetes
// Service must lead to its own apiserver alone (a stale address there
// would send every in-cluster client to a container that is gone).
func TestDockerSeededClusterIsTheFreshOne(t *testing.T) {
	t.Parallel() // a docker cluster that mostly waits: beside the other cluster test
	bin := dockerOrSkip(t)
	seeds := t.TempDir()
	boot := func(name string) (*Backend, []string) {
		t.Helper()
		b, err := New(cluster.Topology{Name: name, Workers: 1}, Options{Dir: filepath.Join(t.TempDir(), name), Binary: bin, Ephemeral: true, Seeds: seeds})
		if err != nil {
			t.Fatal(err)
		}
		return b, seedtest.Up(t, b)
	}
	said := seedtest.Said
	fresh, lines := boot("sfresh")
	if !said(lines, "took seed") {
		t.Fatalf("the first boot did not take the seed:\n%s", strings.Join(lines, "\n"))
	}
	if !said(lines, "recorded the controller-manager's") {
		t.Errorf("the first boot did not record the controller-manager's ServiceAccounts with the seed:\n%s", strings.Join(lines, "\n"))
	}
	seeded, lines := boot("sseeded")
	if !said(lines, "restored seed") {
		t.Fatalf("the second boot did not start from the seed:\n%s", strings.Join(lines, "\n"))
	}
	if !said(lines, "created the controller-manager's") {
		t.Errorf("the seeded boot did not make the controller-manager's ServiceAccounts ahead of it:\n%s", strings.Join(lines, "\n"))
	}
	// The seeded cluster is usable sooner: what its kubelet writes right
	// after registering (its node's Lease) may not be there yet.
	var d string
	var n int
	for range 30 {
		a, b := seedtest.Objects(t, fresh.Access().Kubeconfig), seedtest.Objects(t, seeded.Access().Kubeconfig)
		if d, n = cmp.Diff(a, b), len(a); d == "" {
			break
		}
		time.Sleep(time.Second)
	}
	if d != "" {
		t.Errorf("a seeded cluster's objects differ from a fresh one's beyond the listed differences (-fresh +seeded):\n%s", d)
	}
	t.Logf("compared %d objects", n)

	cs, err := seeded.clientset()
	if err != nil {
		t.Fatal(err)
	}
	slices, err := cs.DiscoveryV1().EndpointSlices("default").List(t.Context(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			addrs = append(addrs, e.Addresses...)
		}
	}
	seeded.mu.Lock()
	own := seeded.ips["kube-apiserver-1"]
	seeded.mu.Unlock()
	if len(addrs) != 1 || addrs[0] != own {
		t.Errorf("the seeded cluster's kubernetes Service leads to %v, want its own apiserver %s alone", addrs, own)
	}
}
