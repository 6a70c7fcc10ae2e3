package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
)

// BenchmarkWaitReaction measures how long a wait takes to pass after the
// state it waits for changed: a node label is patched (the apiserver has
// committed it when Patch returns) while a wait on that label runs.
// Target: <= 100 ms. Reported as ms/reaction (mean over b.N changes).
//
//	go test ./engine -run '^$' -bench WaitReaction -benchtime 20x
func BenchmarkWaitReaction(b *testing.B) {
	if testing.Short() {
		b.Skip("boots a cluster")
	}
	ctx := context.Background()
	s, err := enginetest.Runner(b).Start(ctx, "bench-wait", cluster.Topology{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx, false) //nolint:errcheck
	cs, err := s.Cluster().Client()
	if err != nil {
		b.Fatal(err)
	}
	var total, worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op, err := s.Prepare(fmt.Sprintf(`wait: {expr: 'node("worker-1").labels["bench"] == "v%d"'}`, i), ".")
		if err != nil {
			b.Fatal(err)
		}
		changed := make(chan time.Time, 1)
		go func() {
			time.Sleep(50 * time.Millisecond) // let the wait start
			patch := fmt.Sprintf(`{"metadata":{"labels":{"bench":"v%d"}}}`, i)
			if _, err := cs.CoreV1().Nodes().Patch(ctx, "worker-1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				b.Error(err)
			}
			changed <- time.Now()
		}()
		r := s.Exec(ctx, op)
		done := time.Now()
		if r.Status != engine.Passed {
			b.Fatalf("wait failed: %s", r.Error)
		}
		d := done.Sub(<-changed)
		if d < 0 {
			d = 0 // the watch event beat Patch's response
		}
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/reaction")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}

// BenchmarkStepOverhead measures the engine's own cost per operation: an
// assert that holds at once, run through the same path as a lab step.
//
//	go test ./engine -run '^$' -bench StepOverhead
func BenchmarkStepOverhead(b *testing.B) {
	if testing.Short() {
		b.Skip("boots a cluster")
	}
	ctx := context.Background()
	s, err := enginetest.Runner(b).Start(ctx, "bench-step", cluster.Topology{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx, false) //nolint:errcheck
	op, err := s.Prepare(`assert: {expr: 'node("worker-1").ready && len(pods("")) == 0'}`, ".")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := s.Exec(ctx, op); r.Status != engine.Passed {
			b.Fatal(r.Error)
		}
	}
	b.StopTimer() // teardown is not engine overhead
}
