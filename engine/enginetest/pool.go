package enginetest

import (
	"sync"
	"testing"
	"time"
)

// Pool runs a package's cluster tests at most n at a time, the longest
// first. go test resumes paused parallel tests in no particular order, so
// a package whose tests last 15 to 60 s could end on one long test with
// its other slots idle (the exercises did, for 30-60 s). A test marks
// itself parallel through the pool, with its estimated duration:
//
//	t.Run(name, func(t *testing.T) {
//		pool.Run(t, 40*time.Second) // instead of t.Parallel()
//		...
//	})
//
// A free slot goes to the waiting test with the longest estimate. Tests
// released together (the subtests of a parent that returned) reach the
// pool within microseconds of each other: the pool lets them gather for
// a moment (settle) before it hands out free slots, so the first to
// arrive does not take a slot a longer sibling should have. Run the
// package with go test's -parallel above the number of tests that use
// the pool (Main's parallel argument), so that go test holds none back.
type Pool struct {
	mu       sync.Mutex
	free     int
	waiting  []*poolTest
	settling bool
	// granted, when set, is called with the estimate of each test given
	// a slot, in the order the slots are given (p.mu is held): the order
	// the tests then start in is their goroutines' race, when two slots
	// free at once.
	granted func(est time.Duration)
}

type poolTest struct {
	est   time.Duration
	grant chan struct{}
}

// settle is how long tests released together have to reach the pool.
const settle = 50 * time.Millisecond

// NewPool returns a Pool of n slots.
func NewPool(n int) *Pool { return &Pool{free: n} }

// Run marks t parallel, waits for a slot, longest estimate first, and
// gives the slot back when t ends.
func (p *Pool) Run(t *testing.T, est time.Duration) {
	t.Helper()
	t.Parallel()
	pt := &poolTest{est: est, grant: make(chan struct{})}
	p.mu.Lock()
	p.waiting = append(p.waiting, pt)
	if !p.settling {
		p.settling = true
		time.AfterFunc(settle, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.settling = false
			p.dispatch()
		})
	}
	p.mu.Unlock()
	<-pt.grant
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.free++
		p.dispatch()
	})
}

// Grow adds n slots, for tests that may run side by side from now on.
func (p *Pool) Grow(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free += n
	p.dispatch()
}

// dispatch grants the free slots to the longest waiting tests, unless
// tests are still gathering. p.mu is held.
func (p *Pool) dispatch() {
	for !p.settling && p.free > 0 && len(p.waiting) > 0 {
		best := 0
		for i, pt := range p.waiting {
			if pt.est > p.waiting[best].est {
				best = i
			}
		}
		pt := p.waiting[best]
		p.waiting = append(p.waiting[:best], p.waiting[best+1:]...)
		p.free--
		if p.granted != nil {
			p.granted(pt.est)
		}
		close(pt.grant)
	}
}
