package assertions

import (
	"slices"
	"testing"
)

// TestFields: the fields of a type as expressions name them, for the
// environment's types, nested ones and recorded ones; nil for others.
func TestFields(t *testing.T) {
	for name, want := range map[string]string{"Pod": "phase", "Raft": "hasLeader", "Member": "appliedIndex", "Taint": "effect", "CommandResult": "stdout"} {
		if got := Fields(name); !slices.Contains(got, want) {
			t.Errorf("Fields(%q) = %v, want it to have %q", name, got, want)
		}
	}
	if got := Fields("Compiled"); got != nil {
		t.Errorf("Fields(Compiled) = %v, want nil: expressions never see one", got)
	}
}
