// Package golden compares test output with golden files, which
// `go test -rewrite` writes anew.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files")

// Check compares got with the golden file at path (rewriting it
// with -rewrite).
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -rewrite to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s is stale (run go test -rewrite and review the diff):\n--- got\n%s", path, got)
	}
}
