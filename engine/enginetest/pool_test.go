package enginetest

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestMain lets go test run every test the pool holds (see Pool). They
// boot nothing: they need no cluster turn.
func TestMain(m *testing.M) {
	setParallel(16)
	os.Exit(m.Run())
}

func TestPoolRunsTheLongestFirst(t *testing.T) {
	p := NewPool(2)
	var (
		mu      sync.Mutex
		order   []int
		running int
		most    int
	)
	// The order of the grants, not of the tests' first steps: two slots
	// that free at once start two tests whose goroutines race.
	p.granted = func(est time.Duration) { order = append(order, int(est/time.Second)) }
	ests := []int{3, 9, 1, 7, 5, 8, 2}
	t.Run("tests", func(t *testing.T) {
		for _, e := range ests {
			t.Run(fmt.Sprint(e), func(t *testing.T) {
				p.Run(t, time.Duration(e)*time.Second)
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
			})
		}
	})
	// The first two are granted together, then each later one the slot
	// the earlier ones free.
	want := []int{9, 8, 7, 5, 3, 2, 1}
	if !slices.Equal(order, want) {
		t.Errorf("slots granted in the order %v, want the longest first: %v", order, want)
	}
	if most != 2 {
		t.Errorf("%d ran at once, want the pool's 2", most)
	}
}

func TestPoolGrowsWhileTestsWait(t *testing.T) {
	p := NewPool(1)
	var (
		mu      sync.Mutex
		running int
		most    []int // how many ran at once, as each test started
		grown   bool
	)
	t.Run("tests", func(t *testing.T) {
		for i := range 5 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				p.Run(t, time.Second)
				mu.Lock()
				running++
				most = append(most, running)
				first := !grown
				grown = true
				mu.Unlock()
				if first {
					// The first test runs alone, then makes room for two.
					time.Sleep(30 * time.Millisecond)
					mu.Lock()
					running--
					mu.Unlock()
					p.Grow(1)
					return
				}
				// The others hold their slot until a second test runs
				// beside them (pairs: 4 tests, 2 slots), or a while.
				for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
					mu.Lock()
					n := running
					mu.Unlock()
					if n >= 2 {
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
			})
		}
	})
	if len(most) != 5 || most[0] != 1 || slices.Max(most) != 2 {
		t.Errorf("tests ran %v at once as they started, want 1 alone first, then up to 2", most)
	}
}
