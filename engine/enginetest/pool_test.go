package enginetest

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestMain lets go test run every test the pool holds (see Pool).
func TestMain(m *testing.M) { os.Exit(Main(m, 16)) }

func TestPoolRunsTheLongestFirst(t *testing.T) {
	p := NewPool(2)
	var (
		mu      sync.Mutex
		order   []int
		running int
		most    int
	)
	ests := []int{3, 9, 1, 7, 5, 8, 2}
	t.Run("tests", func(t *testing.T) {
		for _, e := range ests {
			t.Run(fmt.Sprint(e), func(t *testing.T) {
				p.Run(t, time.Duration(e)*time.Second)
				mu.Lock()
				order = append(order, e)
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
	// The first two start together (in either order); each later one
	// takes the slot the earlier ones free.
	want := []int{9, 8, 7, 5, 3, 2, 1}
	if !slices.Equal(order[2:], want[2:]) || !slices.Contains(order[:2], 9) || !slices.Contains(order[:2], 8) {
		t.Errorf("started in the order %v, want the longest first: %v", order, want)
	}
	if most != 2 {
		t.Errorf("%d ran at once, want the pool's 2", most)
	}
}
