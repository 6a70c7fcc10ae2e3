package docker

import (
	"context"
	"path/filepath"
	"testing"
)

// TestAvailableSaysNoWithoutPanicking: an engine that does not answer in
// time is an error, not a panic (testcontainers' client panicked when its
// info request timed out, which took `kubelab down --all` down with it).
func TestAvailableSaysNoWithoutPanicking(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	if err := Available(t.Context()); err == nil {
		t.Error("Available with no engine: nil, want an error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Available(ctx); err == nil {
		t.Error("Available with an ended context: nil, want an error")
	}
}
