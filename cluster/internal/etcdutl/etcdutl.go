// Package etcdutl runs upstream etcdutl, the offline etcd tool that the
// kubelab binary carries as `kubelab component etcdutl`, on this host:
// reading a snapshot's status and restoring a snapshot into a fresh data
// directory. Both backends restore on the host (the embedded members'
// data directories are here; the docker backend copies the restored
// directory into the member's new container).
//
// It runs the binary rather than linking etcdutl's packages, which pull in
// the etcd server.
package etcdutl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"kubelab.dev/kubelab/cluster"
)

// status is `etcdutl snapshot status -w json` of a snapshot file.
type status struct {
	Hash      uint32 `json:"hash"`
	Revision  int64  `json:"revision"`
	TotalKey  int    `json:"totalKey"`
	TotalSize int64  `json:"totalSize"`
	Version   string `json:"version"`
}

// Run runs `bin component etcdutl args...` and returns its standard
// output; an error carries the command and what it printed.
func Run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"component", "etcdutl"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("etcdutl %s: %w: %s", strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()+"\n"+stdout.String()))
	}
	return stdout.Bytes(), nil
}

// SnapshotStatus reads a snapshot file's revision, hash, key count and
// size.
func SnapshotStatus(ctx context.Context, bin, file string) (cluster.SnapshotStatus, error) {
	out, err := Run(ctx, bin, "snapshot", "status", file, "--write-out=json")
	if err != nil {
		return cluster.SnapshotStatus{}, err
	}
	var st status
	if err := json.Unmarshal(out, &st); err != nil {
		return cluster.SnapshotStatus{}, fmt.Errorf("etcdutl snapshot status %s: parse %q: %w", file, out, err)
	}
	return cluster.SnapshotStatus{Revision: st.Revision, Hash: st.Hash, Keys: st.TotalKey, Size: st.TotalSize, Version: st.Version}, nil
}

// Prune runs `bin component prune-snapshot in out prefixes...`: out is the
// snapshot in without the keys under prefixes (and the leases left with
// no key).
func Prune(ctx context.Context, bin, in, out string, prefixes ...string) error {
	cmd := exec.CommandContext(ctx, bin, append([]string{"component", "prune-snapshot", in, out}, prefixes...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("prune-snapshot: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

// Replace restores a member's data from a snapshot into a fresh directory
// next to dataDir (args gets that directory and returns etcdutl's
// arguments), then puts it in dataDir's place. The member must be stopped.
func Replace(ctx context.Context, bin, dataDir string, args func(dir string) []string) error {
	fresh := dataDir + ".restore"
	if err := os.RemoveAll(fresh); err != nil {
		return err
	}
	if _, err := Run(ctx, bin, args(fresh)...); err != nil {
		return err
	}
	if err := os.RemoveAll(dataDir); err != nil {
		return fmt.Errorf("remove old data: %w", err)
	}
	return os.Rename(fresh, dataDir)
}
