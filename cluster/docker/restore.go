package docker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/etcdutl"
)

var _ cluster.EtcdRestorer = (*Backend)(nil)

// SnapshotDir implements cluster.EtcdRestorer: snapshots live in the
// cluster's state directory on the host.
func (b *Backend) SnapshotDir() string { return filepath.Join(b.opts.Dir, "snapshots") }

// SnapshotStatus implements cluster.EtcdRestorer.
func (b *Backend) SnapshotStatus(ctx context.Context, file string) (cluster.SnapshotStatus, error) {
	return etcdutl.SnapshotStatus(ctx, b.etcdutl(), file)
}

// RestoreEtcd implements cluster.EtcdRestorer. A member's data lives on
// the host, bind-mounted into its container (etcdDir): etcdutl restores
// each stopped member into a fresh directory next to it, which then
// replaces it, and the members start again (a container mounts its
// directory when it starts).
func (b *Backend) RestoreEtcd(ctx context.Context, file, token string) error {
	plan := byRole(controlplane.Components(b.topo, b.site()), cluster.RoleEtcd)
	if err := eachComponent(plan, func(c controlplane.Component) error { return b.Act(ctx, c.Name, cluster.Stop) }); err != nil {
		return err
	}
	err := eachComponent(plan, func(c controlplane.Component) error {
		return etcdutl.Replace(ctx, b.etcdutl(), b.etcdDir(c.Name), func(dir string) []string {
			return controlplane.EtcdRestoreArgs(b.topo, b.site(), c.Name, file, dir, token)
		})
	})
	if err != nil {
		return err
	}
	return eachComponent(plan, func(c controlplane.Component) error { return b.Act(ctx, c.Name, cluster.Start) })
}

// eachComponent runs f for every component at once.
func eachComponent(comps []controlplane.Component, f func(controlplane.Component) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(comps))
	for i, c := range comps {
		wg.Go(func() {
			if err := f(c); err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
