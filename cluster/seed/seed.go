// Package seed keeps the seeded control plane's cache: snapshots of etcd
// taken just after the apiservers bootstrapped an empty cluster (RBAC,
// system namespaces, priority classes, flow-control objects), before any
// node, lease holder, ServiceAccount token or lab object exists. A later
// cluster restores one into every etcd member (with its own cluster and
// member IDs, and its own PKI), so its apiservers' post-start hooks only
// confirm what is there instead of writing ~150 objects.
//
// A seed is content-addressed: its key hashes everything that shapes the
// stored state (the build of the components, the backend's way of running
// them, the seed format). Writes are atomic (a temporary file renamed into
// place) under a lock, so two boots at once are safe; every seed carries its
// SHA-256, and one that does not match is discarded, never restored.
//
// The package stores and checks bytes; it starts nothing. The boot
// lifecycle (cluster/lifecycle) decides when to take and restore a seed.
package seed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"kubelab.dev/kubelab/internal/fileid"
)

// Format is the version of what a seed holds and how it is taken; a change
// to either makes every older seed unused.
const Format = "2" // 2: stored without what names the apiserver that took it

// EnvDir names a seed cache shared by several homes (the test suite's
// clusters each have a home of their own, and one seed cache).
const EnvDir = "KUBELAB_SEEDS"

// EnvFresh, set to anything, boots every cluster from nothing, as
// Topology.Fresh does: KUBELAB_FRESH=1 go test ./labs runs the suites on
// fresh control planes.
const EnvFresh = "KUBELAB_FRESH"

// DirOf is the seed cache of a kubelab home: $KUBELAB_SEEDS, else the
// home's seeds directory.
func DirOf(home string) string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return filepath.Join(home, "seeds")
}

// FreshFromEnv says whether $KUBELAB_FRESH asks every cluster to boot
// from nothing.
func FreshFromEnv() bool { return os.Getenv(EnvFresh) != "" }

// keep is how many seeds (builds) a cache keeps; older ones are removed when
// a new one is written.
const keep = 3

// Cache is a directory of seeds.
type Cache struct {
	// Dir holds one directory per seed key.
	Dir string
}

// Key is the content address of a seed: the build of the binary that runs
// the components and the other inputs that shape the state it holds.
func Key(binary string, inputs ...string) (string, error) {
	id, err := fileid.Build(binary)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "format=%s\nbuild=%s\n", Format, id)
	for _, in := range inputs {
		fmt.Fprintf(h, "%s\n", in)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// ErrCorrupt is returned for a seed whose bytes do not match its checksum
// (a partial write, a damaged disk): Get has already removed it.
var ErrCorrupt = errors.New("seed is corrupt")

func (c Cache) dir(key string) string { return filepath.Join(c.Dir, key) }

// Path is where the snapshot of key is (whether or not it exists).
func (c Cache) Path(key string) string { return filepath.Join(c.dir(key), "snapshot.db") }

func (c Cache) sumPath(key string) string { return filepath.Join(c.dir(key), "snapshot.sha256") }

// Get returns the path of the seed of key, checked against its checksum.
// ok is false where there is none. A seed that fails its check is removed
// and reported with ErrCorrupt, so the caller boots from nothing and
// writes it again.
func (c Cache) Get(key string) (path string, ok bool, err error) {
	path = c.Path(key)
	want, err := os.ReadFile(c.sumPath(key))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(path); serr == nil {
			// A snapshot without its checksum was never finished.
			c.Discard(key)
			return "", false, fmt.Errorf("seed %s: %w: no checksum", key, ErrCorrupt)
		}
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("seed %s: %w", key, err)
	}
	got, err := fileid.SHA256(path)
	if err != nil || got != strings.TrimSpace(string(want)) {
		c.Discard(key)
		if err == nil {
			err = fmt.Errorf("checksum %s, want %s", got, strings.TrimSpace(string(want)))
		}
		return "", false, fmt.Errorf("seed %s: %w: %v", key, ErrCorrupt, err)
	}
	return path, true, nil
}

// Discard removes the seed of key (one found corrupt, or one that would
// not restore).
func (c Cache) Discard(key string) { _ = os.RemoveAll(c.dir(key)) }

// Put stores snapshot as the seed of key: written under the cache's lock
// to a temporary file, synced, then renamed into place with its checksum,
// so a reader sees a whole seed or none. A seed another boot wrote first
// is kept. Seeds of older keys beyond the last few are removed.
func (c Cache) Put(key string, snapshot io.Reader) error {
	if err := os.MkdirAll(c.dir(key), 0o700); err != nil {
		return fmt.Errorf("seed %s: %w", key, err)
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok, _ := c.Get(key); ok {
		return nil
	}
	if err := os.MkdirAll(c.dir(key), 0o700); err != nil { // Get may have discarded a corrupt one
		return fmt.Errorf("seed %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(c.dir(key), "snapshot-*.tmp")
	if err != nil {
		return fmt.Errorf("seed %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), snapshot); err != nil {
		tmp.Close()
		return fmt.Errorf("seed %s: write: %w", key, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("seed %s: sync: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("seed %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), c.Path(key)); err != nil {
		return fmt.Errorf("seed %s: %w", key, err)
	}
	// The checksum last: a seed without one is unfinished.
	sum := hex.EncodeToString(h.Sum(nil))
	if err := writeAtomic(c.sumPath(key), []byte(sum+"\n")); err != nil {
		return fmt.Errorf("seed %s: %w", key, err)
	}
	c.prune(key)
	return nil
}

// lock takes the cache's exclusive lock; the returned func releases it.
func (c Cache) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(c.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("seed cache: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock seed cache %s: %w", c.Dir, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// prune removes all but the newest seeds (other builds of kubelab).
func (c Cache) prune(current string) {
	des, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type seedDir struct {
		name string
		mod  time.Time
	}
	var all []seedDir
	for _, de := range des {
		if !de.IsDir() || de.Name() == current {
			continue
		}
		if info, err := de.Info(); err == nil {
			all = append(all, seedDir{de.Name(), info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	for i, s := range all {
		if i >= keep-1 {
			_ = os.RemoveAll(filepath.Join(c.Dir, s.name))
		}
	}
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
