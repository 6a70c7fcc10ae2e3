// Package testbin gives tests the kubelab binary that carries the real
// components. Tests start that binary instead of linking Kubernetes into
// every test executable (a 3 GB, tens-of-seconds link each time).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
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
// The first call in a process that has no cluster turn yet waits for the
// whole machine's (see TakeTurn), and the process keeps it until it exits.
func Path() (string, error) {
	once.Do(func() {
		if err = ensureTurn(); err != nil {
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
