package docker

import (
	"context"
	"os"
	"path/filepath"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/internal/etcdutl"
	"kubelab.dev/kubelab/cluster/lifecycle"
)

// The docker backend starts its etcd members from the seed, as the
// embedded one does.
var _ lifecycle.Seeder = (*Backend)(nil)

// etcdDir is where member m keeps its data on the host: bind-mounted at
// its data directory in the container, so that a seed or a backup is
// restored there with nothing copied into a container, and survives the
// container's stops and starts.
func (b *Backend) etcdDir(m string) string { return filepath.Join(b.opts.Dir, "etcd", m) }

// RestoreSeed implements lifecycle.Seeder: etcdutl restores the seed into
// each member's directory on the host, at once.
func (b *Backend) RestoreSeed(ctx context.Context, snapshot string) error {
	members := byRole(controlplane.Components(b.topo, b.site()), cluster.RoleEtcd)
	err := eachComponent(members, func(c controlplane.Component) error {
		if err := os.MkdirAll(filepath.Dir(b.etcdDir(c.Name)), 0o700); err != nil {
			return err
		}
		_, err := etcdutl.Run(ctx, b.etcdutl(), controlplane.EtcdSeedArgs(b.topo, b.site(), c.Name, snapshot, b.etcdDir(c.Name))...)
		return err
	})
	if err != nil {
		for _, c := range members {
			_ = os.RemoveAll(b.etcdDir(c.Name)) // a member must start from nothing, not half a seed
		}
		return err
	}
	b.mu.Lock()
	b.seeded = true
	b.mu.Unlock()
	return nil
}
