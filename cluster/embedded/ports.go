package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// portBook is the machine-wide record of the ports embedded clusters have
// picked, across every Home: a cluster picks its ports before its
// components listen on them, so two clusters booting side by side in
// different homes (parallel tests, two users' labs) could otherwise pick the
// same free port and one apiserver would fail with "address already in use".
//
// Each cluster has one entry, a file named after its state directory; an
// entry whose directory is gone is stale and is dropped on the next read.
type portBook string

type portEntry struct {
	Dir   string `json:"dir"`
	Ports []int  `json:"ports"`
}

// machinePorts is the book in the system's temp directory, one per user.
func machinePorts() portBook {
	return portBook(filepath.Join(os.TempDir(), fmt.Sprintf("kubelab-ports-%d", os.Getuid())))
}

// lock takes the book's exclusive lock; the returned func releases it.
func (pb portBook) lock() (func(), error) {
	if err := os.MkdirAll(string(pb), 0o700); err != nil {
		return nil, fmt.Errorf("port book: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(string(pb), ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("port book: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock port book %s: %w", pb, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func (pb portBook) file(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(string(pb), hex.EncodeToString(sum[:8])+".json")
}

// used lists the ports of every live entry; call it holding the lock.
func (pb portBook) used() map[int]bool {
	used := map[int]bool{}
	des, _ := os.ReadDir(string(pb))
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		path := filepath.Join(string(pb), de.Name())
		var e portEntry
		raw, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(raw, &e)
		}
		if err != nil || e.Dir == "" {
			_ = os.Remove(path)
			continue
		}
		if _, err := os.Stat(e.Dir); err != nil {
			_ = os.Remove(path)
			continue
		}
		for _, p := range e.Ports {
			used[p] = true
		}
	}
	return used
}

// record writes the entry of the cluster in dir; call it holding the lock.
func (pb portBook) record(dir string, ports []int) error {
	raw, err := json.Marshal(portEntry{Dir: dir, Ports: ports})
	if err != nil {
		return err
	}
	if err := os.WriteFile(pb.file(dir), raw, 0o600); err != nil {
		return fmt.Errorf("port book: %w", err)
	}
	return nil
}

// release drops the entry of the cluster in dir.
func (pb portBook) release(dir string) {
	_ = os.Remove(pb.file(dir))
}
