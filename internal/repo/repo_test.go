package repo

import (
	"os/exec"
	"testing"
)

// TestModuleIsTidy fails when go.mod or go.sum would change under
// `go mod tidy`: no stale requirement, no direct dependency marked
// indirect.
func TestModuleIsTidy(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "mod", "tidy", "-diff").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v\n%s", err, out)
	}
}
