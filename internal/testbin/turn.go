package testbin

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The machine's cluster turn is two halves, each a lock file that a test
// process holds with flock(2) until it exits or gives the half back. The
// README's test command runs `go test -p 2`, so that Go links and vets the
// next packages, and runs those that boot nothing, while others boot
// clusters. A package whose parallel tests are sized to keep the whole
// machine busy (labs, drills, exercises) takes both halves (Main); one
// whose clusters mostly wait (the conformance subsets, the browser view,
// the backends' own tests) takes one (MainHalf), so two of those, or one
// of those and the part of a package that holds one half, run side by
// side; the labs start their docker labs in one half and their embedded
// labs once they have the other (MainGrowing, ReleaseHalf). The next
// package, linked already, starts the moment a half frees. The kernel
// drops a flock when its last descriptor closes, so a test binary that
// dies frees its halves too.
//
// No two processes wait for each other: one that takes both halves, or
// grows into them, takes half 0 first (waiting for it holding nothing)
// and then half 1; one that takes a single half never waits while it
// holds one. Single halves go to half 1 first, so a package that grows
// from half 0 finds it free.

// machine is this machine's turn; tests of the turn use one of their own.
var machine = &turn{dir: filepath.Join(os.TempDir(), "kubelab-testbin")}

// pollEvery is how often a process waiting for either half, or for the
// second half while it may be told to stop, tries them: a blocked flock
// can wait for one file only and cannot be called off.
const pollEvery = 100 * time.Millisecond

// turn is the halves one process holds. A half's *os.File is open for as
// long as the process holds it (close-on-exec: no cluster process
// inherits it), and only this reference keeps it open: an *os.File the
// garbage collector finds unreachable closes its descriptor, and the half
// would go with it.
type turn struct {
	dir string

	mu     sync.Mutex
	halves [2]*os.File
	// released is closed when the process gives its second half back,
	// which also calls off a grow still waiting for it.
	released chan struct{}
	// taken is closed once the process's first taking ended, with err.
	taken chan struct{}
	err   error
}

// lockHalf takes half i, waiting for it when wait is set; it reports
// whether the process has it. t.mu is not held: waiting must not stop
// the process from giving a half back.
func (t *turn) lockHalf(i int, wait bool) (*os.File, bool, error) {
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("cluster turn: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(t.dir, fmt.Sprintf("half-%d.lock", i)), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("cluster turn: %w", err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("cluster turn: half %d: %w", i, err)
	}
	return f, true, nil
}

// take runs the first taking of the process's turn; later calls wait
// for it and return its result.
func (t *turn) take(fn func() error) error {
	t.mu.Lock()
	if t.taken != nil {
		taken := t.taken
		t.mu.Unlock()
		<-taken
		return t.err
	}
	t.taken = make(chan struct{})
	t.released = make(chan struct{})
	t.mu.Unlock()
	t.err = fn()
	close(t.taken)
	return t.err
}

func (t *turn) keep(i int, f *os.File) {
	t.mu.Lock()
	t.halves[i] = f
	t.mu.Unlock()
}

// whole takes half 0, then half 1.
func (t *turn) whole() error {
	return t.take(func() error {
		for i := range 2 {
			f, _, err := t.lockHalf(i, true)
			if err != nil {
				return err
			}
			t.keep(i, f)
		}
		return nil
	})
}

// half takes whichever half frees first, half 1 when both are free.
func (t *turn) half() error {
	return t.take(func() error {
		for {
			for _, i := range []int{1, 0} {
				f, ok, err := t.lockHalf(i, false)
				if err != nil {
					return err
				}
				if ok {
					t.keep(i, f)
					return nil
				}
			}
			time.Sleep(pollEvery)
		}
	})
}

// first takes half 0, for a process that grows into half 1 later.
func (t *turn) first() error {
	return t.take(func() error {
		f, _, err := t.lockHalf(0, true)
		if err == nil {
			t.keep(0, f)
		}
		return err
	})
}

// grow waits for half 1 and reports whether the process got it: false
// when the process gave its second half back (release) first.
func (t *turn) grow() (bool, error) {
	t.mu.Lock()
	released := t.released
	t.mu.Unlock()
	for {
		select {
		case <-released:
			return false, nil
		default:
		}
		f, ok, err := t.lockHalf(1, false)
		if err != nil {
			return false, err
		}
		if ok {
			t.mu.Lock()
			defer t.mu.Unlock()
			select {
			case <-t.released:
				// Given back while it was being taken.
				f.Close()
				return false, nil
			default:
			}
			t.halves[1] = f
			return true, nil
		}
		time.Sleep(pollEvery)
	}
}

// release gives half 1 back, or calls off a grow still waiting for it.
func (t *turn) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released != nil {
		select {
		case <-t.released:
		default:
			close(t.released)
		}
	}
	if t.halves[1] != nil && t.halves[0] != nil {
		t.halves[1].Close()
		t.halves[1] = nil
	}
}

// holds reports whether the process holds any half.
func (t *turn) holds() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.halves[0] != nil || t.halves[1] != nil
}

// ensureTurn gives a process that has no turn yet the whole machine's.
func ensureTurn() error {
	if machine.holds() {
		return nil
	}
	return machine.whole()
}

// TakeTurn waits until the process holds both halves of the machine's
// cluster turn (see the top of this file), and keeps them for the rest
// of its life. Calls after the process's first taking return its result.
func TakeTurn() error { return machine.whole() }

// Main runs a package's tests (call it from TestMain) once the process
// has both halves of the machine's cluster turn, unless -short skips the
// tests that boot clusters: in the turn before any test starts, so that
// no test's own deadline runs while it waits.
func Main(m *testing.M) int { return mainWith(m, machine.whole) }

// MainHalf is Main for a package whose clusters mostly wait: it runs the
// tests once the process has one half of the turn.
func MainHalf(m *testing.M) int { return mainWith(m, machine.half) }

// MainGrowing is Main for a package that starts in one half of the turn
// and grows into the other: it runs the tests once the process has half
// 0, and calls grown when it gets half 1 too (unless ReleaseHalf came
// first); under -short, which takes no turn, it calls grown at once. The
// package's tests that need the whole machine wait for grown.
func MainGrowing(m *testing.M, grown func()) int {
	flag.Parse()
	if testing.Short() {
		grown()
	}
	return mainWith(m, func() error {
		if err := machine.first(); err != nil {
			return err
		}
		go func() {
			ok, err := machine.grow()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			if ok {
				grown()
			}
		}()
		return nil
	})
}

// ReleaseHalf gives half 1 of the turn back to the machine, or calls off
// MainGrowing's wait for it: for a package whose last tests need one half.
// It does nothing in a process that holds one half only.
func ReleaseHalf() { machine.release() }

func mainWith(m *testing.M, take func() error) int {
	flag.Parse()
	if !testing.Short() {
		if err := take(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}
