package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

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
	return etcdutl.SnapshotStatus(ctx, b.opts.Binary, file)
}

// RestoreEtcd implements cluster.EtcdRestorer. A member's data lives in
// its container (/var/lib/etcd), where nothing can be removed while it is
// stopped and nothing can run once it is: etcdutl restores each member on
// the host into a fresh directory laid out as the container sees it, and
// the member's container is replaced by a new one (same name, command and
// network alias) that starts with that directory copied in.
func (b *Backend) RestoreEtcd(ctx context.Context, file, token string) error {
	plan := byRole(controlplane.Components(b.topo, b.site()), cluster.RoleEtcd)
	if err := eachComponent(plan, func(c controlplane.Component) error { return b.Act(ctx, c.Name, cluster.Stop) }); err != nil {
		return err
	}
	return eachComponent(plan, func(c controlplane.Component) error { return b.restoreMember(ctx, c, file, token) })
}

// restoreMember restores one stopped member and starts its new container.
func (b *Backend) restoreMember(ctx context.Context, c controlplane.Component, file, token string) error {
	old := b.get(c.Name)
	if old == nil {
		return fmt.Errorf("no container")
	}
	ins, err := b.cli.ContainerInspect(ctx, old.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	// root/var/lib/etcd on the host is /var/lib/etcd in the container.
	root := filepath.Join(b.opts.Dir, "etcd-restore", c.Name)
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	dataDir := b.site().Etcd(c.Name).DataDir
	hostDir := filepath.Join(root, dataDir)
	if err := os.MkdirAll(filepath.Dir(hostDir), 0o700); err != nil {
		return err
	}
	if _, err := etcdutl.Run(ctx, b.opts.Binary, controlplane.EtcdRestoreArgs(b.topo, b.site(), c.Name, file, hostDir, token)...); err != nil {
		return err
	}
	if _, err := b.cli.ContainerRemove(ctx, old.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
		return fmt.Errorf("remove old container: %w", err)
	}
	// The copy lands under the parent of the target, which must exist:
	// copy the top directory (var) to the root.
	top := filepath.Join(root, firstElem(dataDir))
	files := []testcontainers.ContainerFile{{HostFilePath: top, ContainerFilePath: "/" + firstElem(dataDir), FileMode: 0o700}}
	pk := &pkiDir{dir: filepath.Join(b.opts.Dir, "pki")}
	cmd := append([]string{"component", string(c.Role)}, c.Args...)
	env := map[string]string{}
	for _, kv := range ins.Container.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if err := b.runWith(ctx, c.Name, c.Role, ins.Container.Config.Image, cmd, env, files, nil, nil, pk.mount); err != nil {
		return err
	}
	return os.RemoveAll(root)
}

// firstElem is the first element of an absolute path: "var" of
// /var/lib/etcd.
func firstElem(p string) string {
	for p != "/" && filepath.Dir(p) != "/" {
		p = filepath.Dir(p)
	}
	return filepath.Base(p)
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
