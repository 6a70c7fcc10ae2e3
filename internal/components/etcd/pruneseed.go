package etcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
)

// PruneSnapshot is the component that removes keys from an etcd snapshot:
// `component prune-snapshot IN OUT PREFIX...` restores IN into a
// temporary data directory, starts an etcd member on it (listening on
// loopback only), deletes every key under each PREFIX, revokes the leases
// no key is attached to any more, and writes the member's snapshot to OUT.
// The seed cache uses it to drop what names the apiserver that took a seed
// (its address's master lease and the kubernetes Endpoints it wrote, its
// identity lease), which a cluster restored from the seed would otherwise
// route to until the lease expired.
const PruneSnapshot = "prune-snapshot"

func runPruneSnapshot() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: prune-snapshot IN OUT [PREFIX...]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pruneSnapshot(ctx, os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "prune-snapshot:", err)
		return 1
	}
	return 0
}

func pruneSnapshot(ctx context.Context, in, out string, prefixes []string) (err error) {
	tmp, err := os.MkdirTemp("", "kubelab-prune-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	const name, peer = "prune", "http://127.0.0.1:2380"
	data := filepath.Join(tmp, "data")
	if err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath: in, Name: name, OutputDataDir: data,
		PeerURLs: []string{peer}, InitialCluster: name + "=" + peer, InitialClusterToken: name,
	}); err != nil {
		return fmt.Errorf("restore %s: %w", in, err)
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.LogLevel = name, data, "error"
	cfg.InitialCluster, cfg.InitialClusterToken = name+"="+peer, name
	any0 := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenPeerUrls, cfg.ListenClientUrls = []url.URL{any0}, []url.URL{any0}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start etcd on the restored snapshot: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("etcd on the restored snapshot: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("etcd on the restored snapshot not ready: %w", ctx.Err())
	}
	cli := v3client.New(e.Server)
	defer cli.Close()
	for _, p := range prefixes {
		if _, err := cli.Delete(ctx, p, clientv3.WithPrefix()); err != nil {
			return fmt.Errorf("delete %s: %w", p, err)
		}
	}
	leases, err := cli.Leases(ctx)
	if err != nil {
		return fmt.Errorf("list leases: %w", err)
	}
	for _, l := range leases.Leases {
		ttl, err := cli.TimeToLive(ctx, l.ID, clientv3.WithAttachedKeys())
		if err != nil {
			return fmt.Errorf("lease %x: %w", l.ID, err)
		}
		if len(ttl.Keys) == 0 {
			if _, err := cli.Revoke(ctx, l.ID); err != nil {
				return fmt.Errorf("revoke lease %x: %w", l.ID, err)
			}
		}
	}
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer rc.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, rc)
	return errors.Join(err, f.Close())
}
