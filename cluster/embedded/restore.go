package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/etcdutl"
)

var _ cluster.EtcdRestorer = (*Backend)(nil)

// SnapshotDir implements cluster.EtcdRestorer: snapshots live in the
// cluster's state directory.
func (b *Backend) SnapshotDir() string { return filepath.Join(b.dir, "snapshots") }

// SnapshotStatus implements cluster.EtcdRestorer.
func (b *Backend) SnapshotStatus(ctx context.Context, file string) (cluster.SnapshotStatus, error) {
	return etcdutl.SnapshotStatus(ctx, b.program("etcdutl"), file)
}

// RestoreEtcd implements cluster.EtcdRestorer: the members' data
// directories are on this host, so etcdutl restores each into a fresh
// directory next to it, which then replaces it.
func (b *Backend) RestoreEtcd(ctx context.Context, file, token string) error {
	t := b.Topology()
	members := controlplane.EtcdMembers(t)
	site := b.site()
	if err := b.eachMember(members, func(m string) error { return b.Act(ctx, m, cluster.Stop) }); err != nil {
		return err
	}
	err := b.eachMember(members, func(m string) error {
		return etcdutl.Replace(ctx, b.program("etcdutl"), site.Etcd(m).DataDir, func(dir string) []string {
			return controlplane.EtcdRestoreArgs(t, site, m, file, dir, token)
		})
	})
	if err != nil {
		return err
	}
	return b.eachMember(members, func(m string) error { return b.Act(ctx, m, cluster.Start) })
}

// eachMember runs f for every member at once.
func (b *Backend) eachMember(members []string, f func(m string) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(members))
	for i, m := range members {
		wg.Go(func() {
			if err := f(m); err != nil {
				errs[i] = fmt.Errorf("%s: %w", m, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// site is the layout plan made, from the ports it recorded in order.
func (b *Backend) site() controlplane.Site {
	b.mu.Lock()
	defer b.mu.Unlock()
	ports := make([]int, len(b.st.Ports))
	for i := range ports {
		ports[i] = b.st.Ports[strconv.Itoa(i)]
	}
	next := func() int {
		if len(ports) == 0 {
			return 0
		}
		p := ports[0]
		ports = ports[1:]
		return p
	}
	return newLayout(b.st.Topology, b.dir, next).site
}
