package docker

import (
	"os"
	"path/filepath"
	"testing"
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
