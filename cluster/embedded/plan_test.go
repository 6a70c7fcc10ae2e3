package embedded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/golden"
)

// TestControlPlaneGolden shows the arguments this backend gives the
// shared plan's components; cluster/controlplane checks they match the
// docker backend's apart from addresses and paths.
func TestControlPlaneGolden(t *testing.T) {
	port := 20000
	next := func() int { port++; return port }
	l := newLayout(controlplane.GoldenTopology(), "/home/kubelab/golden", next)
	golden.Check(t, "testdata/controlplane.golden", controlplane.Render(controlplane.Components(controlplane.GoldenTopology(), l.site)))
}

func TestPortBookIsSharedAndForgetsGoneClusters(t *testing.T) {
	book := portBook(t.TempDir())
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(b, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, err := book.lock()
	if err != nil {
		t.Fatal(err)
	}
	if err := book.record(a, []int{20001, 20002}); err != nil {
		t.Fatal(err)
	}
	if err := book.record(b, []int{20003}); err != nil {
		t.Fatal(err)
	}
	unlock()
	if got := book.used(); len(got) != 3 || !got[20001] || !got[20003] {
		t.Fatalf("used = %v, want 20001-20003", got)
	}
	ports, err := freePorts(3, book.used())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p >= 20001 && p <= 20003 {
			t.Errorf("freePorts picked %d, which the book reserves", p)
		}
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if got := book.used(); len(got) != 2 || got[20003] {
		t.Errorf("after its directory went, used = %v, want only 20001 and 20002", got)
	}
	if _, err := os.Stat(book.file(b)); !os.IsNotExist(err) {
		t.Errorf("the stale entry is still there (%v)", err)
	}
	book.release(a)
	if got := book.used(); len(got) != 0 {
		t.Errorf("after release, used = %v", got)
	}
}

// TestProxyModeIsRefused: kwok nodes run no kube-proxy, so a node that
// asks for a kube-proxy mode is a topology this backend cannot give: Up
// says so before it starts anything.
func TestProxyModeIsRefused(t *testing.T) {
	topo := cluster.Topology{Nodes: []cluster.NodeSpec{{Name: "worker-1"}, {Name: "worker-2", ProxyMode: cluster.ProxyNFTables}}}
	b, err := New(topo, Options{Home: Home(t.TempDir()), Binary: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Up(t.Context(), nil)
	if !errors.Is(err, cluster.ErrTopology) || !strings.Contains(err.Error(), "node worker-2 sets proxyMode nftables") {
		t.Errorf("Up = %v, want ErrTopology naming the node", err)
	}
}
