// Package testbin gives tests the kubelab binary that carries the real
// components. Tests start that binary instead of linking Kubernetes into
// every test executable (a 3 GB, tens-of-seconds link each time).
package testbin

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
)

// Path returns the kubelab binary: $KUBELAB_BIN when set, else one built
// from this checkout by hack/build.sh into a shared temp location. Builds
// from several test processes are serialized with a file lock, and Go's
// build cache makes all but the first a no-op.
//
// It also points $KUBELAB_SEEDS, unless set, at a seed cache every test
// process of this user shares: each test's cluster has a home of its own,
// and all of them one seed per build (see cluster/seed).
//
// The first call waits for the machine's cluster turn (see TakeTurn), and
// the process keeps it until it exits.
func Path() (string, error) {
	once.Do(func() {
		if err = TakeTurn(); err != nil {
			return
		}
		if os.Getenv("KUBELAB_SEEDS") == "" {
			os.Setenv("KUBELAB_SEEDS", filepath.Join(os.TempDir(), fmt.Sprintf("kubelab-test-seeds-%d", os.Getuid())))
		}
		if p := os.Getenv("KUBELAB_BIN"); p != "" {
			path = p
			return
		}
		var root string
		if root, err = Root(); err != nil {
			return
		}
		dir := filepath.Join(os.TempDir(), "kubelab-testbin")
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		var lock *os.File
		lock, err = os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return
		}
		defer lock.Close()
		if err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			return
		}
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
		out := filepath.Join(dir, "kubelab")
		cmd := exec.Command(filepath.Join(root, "hack", "build.sh"), out)
		cmd.Dir = root
		b, berr := cmd.CombinedOutput()
		if berr != nil {
			err = fmt.Errorf("build kubelab: %w\n%s", berr, b)
			return
		}
		path = out
	})
	return path, err
}

// Root is the module root: the first directory up from the working
// directory (a test's package directory) that holds go.mod. Tests build
// with -trimpath, so source file paths cannot say where the checkout is.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

var (
	turnOnce sync.Once
	turnErr  error
	// turn is the lock file of the cluster turn, open for the life of
	// the process that holds it (close-on-exec: no cluster process
	// inherits it). Only this reference keeps it open: an *os.File the
	// garbage collector finds unreachable closes its descriptor, and the
	// turn would go with it.
	turn *os.File
)

// Main runs a package's tests (call it from TestMain) once the process
// has the machine's cluster turn (see TakeTurn), unless -short skips the
// tests that boot clusters: in the turn before any test starts, so that
// no test's own deadline runs while it waits.
func Main(m *testing.M) int {
	flag.Parse()
	if !testing.Short() {
		if err := TakeTurn(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// TakeTurn waits until no other test process on the machine holds the
// cluster turn, then takes it for the rest of the process's life: one
// test binary at a time boots clusters. The README's test command runs
// `go test -p 2`, so that Go links and vets the next packages, and runs
// those that boot nothing, while a package boots its clusters; the
// packages that boot clusters (each sizes its parallel tests to the
// whole machine) take turns here, and the next one, linked already,
// starts the moment the one before exits. The kernel drops the flock
// when its last descriptor closes, so a test binary that dies frees the
// turn too. Calls after the first return the first one's result.
func TakeTurn() error {
	turnOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "kubelab-testbin")
		if turnErr = os.MkdirAll(dir, 0o755); turnErr != nil {
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, "clusters.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			turnErr = fmt.Errorf("cluster turn: %w", err)
			return
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			turnErr = fmt.Errorf("cluster turn: %w", err)
			return
		}
		turn = f
	})
	return turnErr
}
