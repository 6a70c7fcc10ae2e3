package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"kubelab.dev/kubelab/internal/proc"

	"kubelab.dev/kubelab/cluster"
)

// Home is where clusters keep their state: one directory per cluster under
// Home/clusters. It defaults to $KUBELAB_HOME, else
// $XDG_STATE_HOME/kubelab, else ~/.local/state/kubelab.
type Home string

// DefaultHome resolves the default Home.
func DefaultHome() Home {
	if h := os.Getenv(envHome); h != "" {
		return Home(h)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return Home(filepath.Join(x, "kubelab"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		return Home(filepath.Join(h, ".local", "state", "kubelab"))
	}
	return Home(filepath.Join(os.TempDir(), "kubelab"))
}

// Dir is the state directory of cluster name.
func (h Home) Dir(name string) string { return filepath.Join(string(h), "clusters", name) }

// state is what a cluster writes about itself in its directory
// (state.json): enough for any later kubelab invocation to inspect, hurt
// or remove it.
type state struct {
	Topology cluster.Topology `json:"topology"`
	// Owner is the PID of the process the cluster lives and dies with; 0
	// once `kubelab up` has handed it over to the user.
	Owner int `json:"owner,omitempty"`
	// OwnerStart is the owner's start time (clock ticks), against PID reuse.
	OwnerStart string            `json:"ownerStart,omitempty"`
	Ready      bool              `json:"ready"`
	Ports      map[string]int    `json:"ports"`
	Procs      []*procSpec       `json:"procs"`
	Files      map[string]string `json:"files"`
}

func (h Home) load(name string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(h.Dir(name), "state.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cluster %q: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("read cluster %q: %w", name, err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("read cluster %q state: %w", name, err)
	}
	return &st, nil
}

func (h Home) save(name string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(h.Dir(name), "state.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write cluster %q state: %w", name, err)
	}
	return os.Rename(tmp, filepath.Join(h.Dir(name), "state.json"))
}

// ErrNotFound is returned for a cluster that does not exist.
var ErrNotFound = errors.New("no such cluster")

// Clusters lists the names of clusters in h.
func (h Home) Clusters() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(string(h), "clusters"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// ownerAlive tells whether the process that owns an ephemeral cluster is
// still there.
func ownerAlive(st *state) bool {
	if st.Owner == 0 {
		return true // handed over to the user: not an orphan
	}
	if err := syscall.Kill(st.Owner, 0); err != nil && errors.Is(err, syscall.ESRCH) {
		return false
	}
	return procStartTime(st.Owner) == st.OwnerStart
}

func procStartTime(pid int) string { return proc.StartTime(pid) }

// Sweep removes orphans: processes of clusters whose owner died (kubelab
// was killed with -9 while running a lab, or during `up`), processes whose
// cluster directory is gone, and the directories of such clusters. It
// returns the names of clusters it removed.
func (h Home) Sweep(ctx context.Context) ([]string, error) {
	names, err := h.Clusters()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	var removed []string
	var errs []error
	for _, n := range names {
		st, err := h.load(n)
		if errors.Is(err, ErrNotFound) && young(h.Dir(n)) {
			known[n] = true // being created: Up writes state.json right after the directory
			continue
		}
		if err != nil || !ownerAlive(st) {
			if err := h.remove(ctx, n); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, n)
			continue
		}
		known[n] = true
	}
	for _, p := range taggedProcs() {
		if p.Home != string(h) || known[p.Cluster] {
			continue
		}
		// The cluster may have been created since the directory listing
		// above (another kubelab booting next to this one): look again.
		if st, err := h.load(p.Cluster); err == nil && ownerAlive(st) {
			continue
		}
		if young(h.Dir(p.Cluster)) {
			continue
		}
		_ = kill(ctx, p.PID, p.Cluster, p.Component)
	}
	return removed, errors.Join(errs...)
}

// portList is the cluster's ports, for the machine's port book.
func (st *state) portList() []int {
	out := make([]int, 0, len(st.Ports))
	for _, p := range st.Ports {
		out = append(out, p)
	}
	return out
}

// young reports whether a directory was made in the last minute.
func young(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && time.Since(st.ModTime()) < time.Minute
}

// remove kills every process of cluster name and deletes its directory.
func (h Home) remove(ctx context.Context, name string) error {
	var errs []error
	for _, p := range taggedProcs() {
		if p.Home == string(h) && p.Cluster == name {
			if err := kill(ctx, p.PID, p.Cluster, p.Component); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(h.Dir(name)); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", h.Dir(name), err))
	}
	machinePorts().release(h.Dir(name))
	return errors.Join(errs...)
}

// RemoveAll removes every cluster in h, and every tagged process of h.
func (h Home) RemoveAll(ctx context.Context) ([]string, error) {
	names, err := h.Clusters()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, n := range names {
		if err := h.remove(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range taggedProcs() {
		if p.Home == string(h) {
			_ = kill(ctx, p.PID, p.Cluster, p.Component)
		}
	}
	return names, errors.Join(errs...)
}

// graceful is how long a component gets to exit on SIGTERM.
const graceful = 20 * time.Second
