package docker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// TestHomeIDFollowsSymlinks: a home reached through a symbolic link is the
// same home (down --all through the link must find the home's
// containers), whether or not it exists yet.
func TestHomeIDFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if a, b := HomeID(real), HomeID(link); a != b {
		t.Errorf("HomeID(%s) = %s, HomeID(%s) = %s: want one home", real, a, link, b)
	}
	if a, b := HomeID(filepath.Join(real, "home")), HomeID(filepath.Join(link, "home")); a != b {
		t.Errorf("a home not made yet, through the link: %s, %s", a, b)
	}
	if HomeID(real) == HomeID(filepath.Join(dir, "other")) {
		t.Error("two homes share an ID")
	}
}

// TestDownRemovesLeftovers: a cluster whose containers were removed by
// hand leaves its network and state directory; `kubelab down --name`
// removes them and says so, and a second down finds no such cluster.
func TestDownRemovesLeftovers(t *testing.T) {
	bin := dockerOrSkip(t)
	ctx := context.Background()
	home := t.TempDir()
	dir := filepath.Join(home, "docker", "gone")
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	labels := map[string]string{labelManaged: "true", labelCluster: "gone", labelHome: HomeID(home)}
	nw, err := dc.NetworkCreate(ctx, "kubelab-test-leftover-"+HomeID(home), client.NetworkCreateOptions{Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = dc.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}) })

	out, err := exec.Command(bin, "--home", home, "down", "--name", "gone").CombinedOutput()
	if err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `removed what was left of docker cluster "gone"`) {
		t.Errorf("down does not say what it removed:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state directory %s: %v, want it removed", dir, err)
	}
	ns, err := dc.NetworkList(ctx, client.NetworkListOptions{Filters: homeFilter(home, "gone")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Items) > 0 {
		t.Errorf("network %s is left", ns.Items[0].Name)
	}
	out, err = exec.Command(bin, "--home", home, "down", "--name", "gone").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no such cluster") {
		t.Errorf("second down: %v, want no such cluster:\n%s", err, out)
	}
}
