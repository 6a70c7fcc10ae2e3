package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/load"
)

// noRestoreBackend is a backend without etcd snapshots; booting it is a
// test failure.
type noRestoreBackend struct {
	t    *testing.T
	topo cluster.Topology
}

func (b noRestoreBackend) Name() string { return "fake" }
func (b noRestoreBackend) Up(context.Context, func(cluster.Event)) error {
	b.t.Error("Up called for a lab the backend cannot run")
	return nil
}
func (b noRestoreBackend) Down(context.Context) error { return nil }
func (b noRestoreBackend) Components(context.Context) ([]cluster.Component, error) {
	return nil, nil
}
func (b noRestoreBackend) Act(context.Context, string, cluster.Action) error { return nil }
func (b noRestoreBackend) Access() cluster.Access                            { return cluster.Access{} }
func (b noRestoreBackend) Topology() cluster.Topology                        { return b.topo }

// TestEtcdSnapshotsNeedARestorer: a lab that takes snapshots fails before
// its cluster boots on a backend that cannot restore them, naming it.
func TestEtcdSnapshotsNeedARestorer(t *testing.T) {
	lab, err := load.ReadLab("../load/testdata/valid-etcd-backup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !lab.NeedsEtcdSnapshots() {
		t.Fatal("NeedsEtcdSnapshots = false for a lab with snapshot and restore")
	}
	r := &Runner{Backend: func(topo cluster.Topology) (cluster.Backend, error) { return noRestoreBackend{t, topo}, nil }}
	_, err = r.Run(t.Context(), lab)
	if !errors.Is(err, cluster.ErrNoEtcdRestore) || !strings.Contains(err.Error(), "fake backend") {
		t.Errorf("Run = %v, want ErrNoEtcdRestore naming the fake backend", err)
	}
	other, err := load.ParseLab("inline.yaml", []byte("apiVersion: kubelab.dev/v1alpha1\nkind: Lab\nmetadata: {name: t, title: T}\n"+
		"spec: {steps: [{name: s, try: [{sleep: {duration: 1ms}}]}]}"))
	if err != nil {
		t.Fatal(err)
	}
	if other.NeedsEtcdSnapshots() {
		t.Error("NeedsEtcdSnapshots = true for a lab without snapshots")
	}
}
