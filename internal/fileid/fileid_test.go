package fileid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildOfAGoExecutableIsItsBuildID(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id, err := Build(self)
	if err != nil || strings.HasPrefix(id, "sha256:") || strings.Count(id, "/") < 1 {
		t.Errorf("Build of a Go executable = %q, %v; want its Go build ID", id, err)
	}
}

func TestBuildOfOtherFilesIsTheirHash(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("build one"), 0o700)
	os.WriteFile(b, []byte("build two"), 0o700)
	ia, err := Build(a)
	if err != nil || !strings.HasPrefix(ia, "sha256:") {
		t.Fatalf("Build(a) = %q, %v", ia, err)
	}
	ib, _ := Build(b)
	ha, _ := BuildHex(a)
	hb, _ := BuildHex(b)
	if ia == ib || ha == hb || len(ha) != 64 {
		t.Errorf("ids do not tell the files apart: %s %s / %s %s", ia, ib, ha, hb)
	}
}
