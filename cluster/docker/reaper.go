package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ReaperComponent is the name the reaper runs under: `kubelab component
// kubelab-reaper --owner PID:START --home HOME --cluster NAME --dir DIR [--ephemeral]`.
const ReaperComponent = "kubelab-reaper"

// startReaper starts a detached process that removes the cluster's
// containers, networks, volumes and state directory as soon as this
// process dies before handing the cluster over: Ryuk's job, which cannot
// run here because its image cannot be pulled.
func (b *Backend) startReaper() error {
	args := []string{"component", ReaperComponent, "--owner", fmt.Sprintf("%d:%s", os.Getpid(), b.opts.OwnerStart),
		"--home", b.opts.Home, "--cluster", b.topo.Name, "--dir", b.opts.Dir}
	if b.opts.Ephemeral {
		args = append(args, "--ephemeral")
	}
	logf, err := os.OpenFile(filepath.Join(b.opts.Dir, "reaper.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(b.opts.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start reaper: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it ends while we live
	return nil
}

// Reap watches owner and removes the cluster when the owner dies while
// the cluster is ephemeral or not yet handed over. It returns when the
// cluster is gone or handed over.
func Reap(ctx context.Context, owner, home, name, dir string, ephemeral bool) error {
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer dc.Close()
	f := homeFilter(home, name)
	seen := false
	var removeErr error
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if !ephemeral {
			if _, err := os.Stat(filepath.Join(dir, readyMarker)); err == nil {
				return true, nil // handed over to the user: `kubelab down` removes it
			}
		}
		cs, err := dc.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err == nil {
			if len(cs.Items) > 0 {
				seen = true
			} else if seen {
				return true, nil // removed by its owner
			}
		}
		if !ownerAlive(owner) {
			fmt.Fprintf(os.Stderr, "owner %s of cluster %s is gone: removing it\n", owner, name)
			removeErr = errors.Join(RemoveCluster(ctx, dc.Client, home, name), os.RemoveAll(dir))
			return true, nil
		}
		return false, nil
	})
	return errors.Join(removeErr, err)
}
