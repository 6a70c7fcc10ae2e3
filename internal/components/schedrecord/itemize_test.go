package schedrecord

import (
	"fmt"
	"testing"

	"kubelab.dev/kubelab/observe"
)

// TestItemize: past n scored nodes, a decision keeps the per-plugin scores
// of the n best by total and of the selected node, counts the others, and
// leaves the totals whole.
func TestItemize(t *testing.T) {
	d := observe.Decision{Total: map[string]int64{}, Raw: map[string]map[string]int64{}, Scores: map[string]map[string]int64{}}
	for i := range 30 {
		n := fmt.Sprintf("worker-%d", i)
		d.Total[n] = int64(i)
		d.Raw[n] = map[string]int64{"NodeResourcesFit": int64(i)}
		d.Scores[n] = map[string]int64{"NodeResourcesFit": int64(i)}
	}
	d.Selected = "worker-3" // not among the best: a tie broken elsewhere, or a later bind
	raw, norm, left := itemize(d, 5)
	if left != 24 || len(raw) != 6 || len(norm) != 6 {
		t.Fatalf("itemized %d raw, %d normalized, %d left out; want 6, 6, 24", len(raw), len(norm), left)
	}
	for _, n := range []string{"worker-29", "worker-25", "worker-3"} {
		if _, ok := norm[n]; !ok {
			t.Errorf("%s not itemized: %v", n, norm)
		}
	}
	if _, ok := norm["worker-24"]; ok {
		t.Error("worker-24 itemized, though sixth best")
	}
	if raw, norm, left := itemize(d, 30); left != 0 || len(raw) != 30 || len(norm) != 30 {
		t.Errorf("a decision within the limit lost detail: %d %d %d", len(raw), len(norm), left)
	}
}
