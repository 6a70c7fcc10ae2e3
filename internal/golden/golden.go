// Package golden compares test output with golden files, which
// `go test -rewrite` writes anew.
//
// The -rewrite flag is the one github.com/cockroachdb/datadriven
// registers, so golden files and datadriven transcripts can be checked by
// the same test binary and are rewritten by the same flag (registering it
// twice would panic).
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	// Registers -rewrite before this package reads it.
	_ "github.com/cockroachdb/datadriven"
)

// rewriting reports whether the test binary runs with -rewrite.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	on, _ := g.Get().(bool)
	return on
}

// Check compares got with the golden file at path (rewriting it
// with -rewrite).
func Check(t testing.TB, path, got string) {
	t.Helper()
	if rewriting() {
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
