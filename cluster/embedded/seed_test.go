package embedded

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/seed"
	"kubelab.dev/kubelab/cluster/seed/seedtest"
)

// TestSeededClusterIsTheFreshOne boots a cluster from nothing (which takes
// the seed), then one from the seed, and compares every API object of
// the two: the seeded control plane must be the real, freshly bootstrapped
// one, differing only where two clusters always differ (listed in
// seedtest). Then it damages the seed: the next boot says so, boots from
// nothing, and takes a whole seed again.
func TestSeededClusterIsTheFreshOne(t *testing.T) {
	t.Parallel() // beside the other cluster of this package that mostly waits
	bin := binary(t)
	seeds := t.TempDir()
	home := t.TempDir()
	boot := func(name string) (*Backend, []string) {
		t.Helper()
		b, err := New(cluster.Topology{Name: name, Workers: 2}, Options{Home: Home(home), Binary: bin, Ephemeral: true, Seeds: seeds})
		if err != nil {
			t.Fatal(err)
		}
		return b, seedtest.Up(t, b)
	}
	said := seedtest.Said

	fresh, lines := boot("fresh")
	if !said(lines, "booting from nothing, then taking one") || !said(lines, "took seed") {
		t.Fatalf("the first boot did not boot fresh and take the seed:\n%s", strings.Join(lines, "\n"))
	}
	if !said(lines, "recorded the controller-manager's") {
		t.Errorf("the first boot did not record the controller-manager's ServiceAccounts with the seed:\n%s", strings.Join(lines, "\n"))
	}
	seeded, lines := boot("seeded")
	if !said(lines, "restored seed") {
		t.Fatalf("the second boot did not start from the seed:\n%s", strings.Join(lines, "\n"))
	}
	if !said(lines, "created the controller-manager's") {
		t.Errorf("the seeded boot did not make the controller-manager's ServiceAccounts ahead of it:\n%s", strings.Join(lines, "\n"))
	}
	a, b := seedtest.Objects(t, fresh.Access().Kubeconfig), seedtest.Objects(t, seeded.Access().Kubeconfig)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("a seeded cluster's objects differ from a fresh one's beyond the listed differences (-fresh +seeded):\n%s", d)
	}
	t.Logf("compared %d objects", len(a))

	key, err := fresh.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	cache := seed.Cache{Dir: seeds}
	snap := cache.Path(key)
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(snap, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, lines = boot("after-damage")
	if !said(lines, "seed is corrupt") || !said(lines, "discarded") || !said(lines, "took seed") {
		t.Fatalf("a damaged seed was not reported, discarded and taken again:\n%s", strings.Join(lines, "\n"))
	}
	if _, ok, err := cache.Get(key); !ok || err != nil {
		t.Errorf("no whole seed after the rebuild: ok %t, err %v", ok, err)
	}
}
