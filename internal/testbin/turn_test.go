package testbin

import (
	"testing"
	"time"
)

// Each turn below stands for a test process: flock(2) locks belong to an
// open file, so two turns of one process exclude each other as two
// processes do.

// exit gives back what t holds, as a process's exit does.
func (t *turn) exit() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, f := range t.halves {
		if f != nil {
			f.Close()
			t.halves[i] = nil
		}
	}
}

func (t *turn) holding() [2]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return [2]bool{t.halves[0] != nil, t.halves[1] != nil}
}

// async runs fn and returns a channel with its error once it returns.
func async(fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	return done
}

func waitFor(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
	}
}

// stillWaiting fails t if done has returned within a few polls.
func stillWaiting(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) while the halves it needs are held", what, err)
	case <-time.After(5 * pollEvery):
	}
}

func TestTwoHalvesRunSideBySideAndTheWholeWaitsForBoth(t *testing.T) {
	dir := t.TempDir()
	a, b, w := &turn{dir: dir}, &turn{dir: dir}, &turn{dir: dir}
	waitFor(t, "first half", async(a.half))
	waitFor(t, "second half", async(b.half))
	if a.holding() != [2]bool{false, true} || b.holding() != [2]bool{true, false} {
		t.Fatalf("halves: a %v, b %v; want a half 1 (single halves go there first), b half 0", a.holding(), b.holding())
	}
	third := &turn{dir: dir}
	thirdDone := async(third.half)
	stillWaiting(t, "a third half", thirdDone)
	whole := async(w.whole)
	a.exit()
	waitFor(t, "the third half, once a half frees", thirdDone)
	stillWaiting(t, "the whole turn", whole)
	b.exit()
	third.exit()
	waitFor(t, "the whole turn, once both halves free", whole)
	if w.holding() != [2]bool{true, true} {
		t.Fatalf("whole turn holds %v", w.holding())
	}
	// Later takings return the first one's result without waiting.
	waitFor(t, "a second taking by the same process", async(w.half))
	w.exit()
}

func TestGrowingIntoTheSecondHalfAndGivingItBack(t *testing.T) {
	dir := t.TempDir()
	g, h, w := &turn{dir: dir}, &turn{dir: dir}, &turn{dir: dir}
	waitFor(t, "a single half", async(h.half))
	waitFor(t, "the grower's first half", async(g.first))
	grew := make(chan bool, 1)
	growDone := async(func() error {
		ok, err := g.grow()
		grew <- ok
		return err
	})
	stillWaiting(t, "grow while the other half is held", growDone)
	// A process that wants the whole machine waits, holding nothing,
	// while the grower holds half 0: no two processes wait for each other.
	whole := async(w.whole)
	h.exit()
	waitFor(t, "grow, once half 1 frees", growDone)
	if !<-grew || g.holding() != [2]bool{true, true} {
		t.Fatalf("after grow: holds %v", g.holding())
	}
	stillWaiting(t, "the whole turn while the grower holds both", whole)
	g.release()
	if g.holding() != [2]bool{true, false} {
		t.Fatalf("after release: holds %v, want half 0 only", g.holding())
	}
	stillWaiting(t, "the whole turn while the grower holds half 0", whole)
	single := &turn{dir: dir}
	waitFor(t, "a single half beside the grower", async(single.half))
	single.exit()
	g.exit()
	waitFor(t, "the whole turn once the grower exits", whole)
	w.exit()
}

func TestReleaseCallsOffAWaitingGrow(t *testing.T) {
	dir := t.TempDir()
	g, h := &turn{dir: dir}, &turn{dir: dir}
	defer h.exit()
	defer g.exit()
	waitFor(t, "a single half", async(h.half))
	waitFor(t, "the grower's first half", async(g.first))
	grew := make(chan bool, 1)
	growDone := async(func() error {
		ok, err := g.grow()
		grew <- ok
		return err
	})
	stillWaiting(t, "grow", growDone)
	g.release()
	waitFor(t, "grow, once released", growDone)
	if <-grew || g.holding() != [2]bool{true, false} {
		t.Fatalf("a called-off grow: holds %v", g.holding())
	}
}
