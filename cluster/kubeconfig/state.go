package kubeconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"kubelab.dev/kubelab/cluster"
)

// stateFile names, in a run's state directory, the record Up writes and
// Open reads.
const stateFile = "run.json"

// ErrNotFound is returned by Open for a directory that records no run.
var ErrNotFound = errors.New("no kubeconfig run recorded")

// record is what a run needs to be reopened by another process: the
// cluster, the namespace and whether the run made it, and the nodes as Up
// found them (Down puts them back).
type record struct {
	Kubeconfig   string               `json:"kubeconfig"`
	Context      string               `json:"context,omitempty"`
	Run          string               `json:"run"`
	Namespace    string               `json:"namespace"`
	OwnNamespace bool                 `json:"ownNamespace"`
	Topology     cluster.Topology     `json:"topology"`
	Nodes        map[string]nodeState `json:"nodes"`
}

// save writes the run's record into its state directory.
func (b *Backend) save() error {
	r := record{Kubeconfig: b.o.Kubeconfig, Context: b.o.Context, Run: b.run, Namespace: b.ns, OwnNamespace: b.ownNS,
		Topology: b.topo, Nodes: b.nodes}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.o.Dir, stateFile), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record the run: %w", err)
	}
	return nil
}

// Open attaches to the run recorded in dir by an earlier Up, maybe in
// another process: its Down removes what that run made.
func Open(dir string) (*Backend, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	t := r.Topology
	t.Name = r.Run
	b := &Backend{o: Options{Kubeconfig: r.Kubeconfig, Context: r.Context, Dir: dir}, topo: t, run: r.Run, ns: r.Namespace,
		ownNS: r.OwnNamespace, copy: filepath.Join(dir, "kubeconfig"), nodes: r.Nodes}
	if err := b.connect(); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.Run, err)
	}
	return b, nil
}

// Runs lists the runs recorded under root (one directory per run), by
// name: what `kubelab down --all` removes.
func Runs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), stateFile)); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
