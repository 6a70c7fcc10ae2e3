// Package labs holds kubelab's lab files. The test runs every one of them
// on a real embedded cluster, so a shipped lab cannot rot.
package labs

import (
	"path/filepath"
	"testing"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
)

func TestLabsLoad(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	if len(files) < 5 {
		t.Fatalf("found %d labs, want at least 5", len(files))
	}
	for _, f := range files {
		if _, err := engine.Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestLabsPass(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			res := enginetest.Run(t, f)
			for _, r := range res.Recovery {
				t.Logf("recovery: %s", r.Describe)
			}
		})
	}
}
