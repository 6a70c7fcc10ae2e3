package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSideBySideLimitsAndStopsStarting(t *testing.T) {
	var running, most atomic.Int32
	var mu sync.Mutex
	ran := map[int]bool{}
	SideBySide(t.Context(), 6, 2, func(i int) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		mu.Lock()
		ran[i] = true
		mu.Unlock()
	}, nil)
	if most.Load() != 2 || len(ran) != 6 {
		t.Errorf("at most %d at once, %d ran; want 2 and 6", most.Load(), len(ran))
	}

	ctx, cancel := context.WithCancel(t.Context())
	var started, skipped atomic.Int32
	SideBySide(ctx, 5, 1, func(i int) {
		started.Add(1)
		if i == 1 {
			cancel()
		}
	}, func(int) { skipped.Add(1) })
	if started.Load() != 2 || skipped.Load() != 3 {
		t.Errorf("after the end of ctx: %d started, %d not; want 2 and 3", started.Load(), skipped.Load())
	}
}
