package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/moby/moby/client"
	"golang.org/x/sync/errgroup"

	"kubelab.dev/kubelab/cluster"
)

// LoadImage puts an image into the containerd of every worker: see
// LoadImages.
func (b *Backend) LoadImage(ctx context.Context, ref string, say func(string)) error {
	return b.LoadImages(ctx, []string{ref}, say)
}

// LoadImages puts images into the containerd of every worker of the
// cluster, as `kind load docker-image` does: each ref is a file made by
// `docker save`, or an image of the host's Docker engine. Pods then run
// them as loaded, whatever their imagePullPolicy says for their tag (see
// preload.go): no registry is needed.
//
// The engine's images are saved into one tarball, so the layers they
// share (a common base, two tags of one image) are sent and unpacked once
// per worker, and the workers import at the same time: the 13 images of
// hack/conformance.sh took 72 s one by one and worker by worker (11 s
// now).
func (b *Backend) LoadImages(ctx context.Context, refs []string, say func(string)) error {
	var files, engine []string
	for _, ref := range refs {
		if st, err := os.Stat(ref); err == nil && !st.IsDir() {
			files = append(files, ref)
		} else {
			engine = append(engine, ref)
		}
	}
	tars := files
	if len(engine) > 0 {
		tar, cleanup, err := b.saveImages(ctx, engine)
		if err != nil {
			return err
		}
		defer cleanup()
		tars = append(tars, tar)
	}
	comps, err := b.Components(ctx)
	if err != nil {
		return err
	}
	var workers []string
	for _, c := range comps {
		if c.Role == cluster.RoleNode && c.State == cluster.StateRunning {
			workers = append(workers, c.Name)
		}
	}
	if len(workers) == 0 {
		return fmt.Errorf("load %s: cluster %s has no running worker", strings.Join(refs, " "), b.topo.Name)
	}
	var (
		mu     sync.Mutex
		images []string
	)
	g, gctx := errgroup.WithContext(ctx)
	for _, w := range workers {
		g.Go(func() error {
			for _, tar := range tars {
				out, err := b.importTar(gctx, w, tar)
				if err != nil {
					return fmt.Errorf("load %s into %s: %w: %s", strings.Join(refs, " "), w, err, strings.TrimSpace(out))
				}
				mu.Lock()
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					say(fmt.Sprintf("%s: %s", w, line))
				}
				images = append(images, importedImages(out)...)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	cs, err := b.clientset()
	if err != nil {
		return err
	}
	return markPreloaded(ctx, cs, images)
}

// importTar imports a docker-save tarball into a worker's containerd.
func (b *Backend) importTar(ctx context.Context, worker, tar string) (string, error) {
	f, err := os.Open(tar)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return b.execStdin(ctx, b.get(worker).id, f, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack=false", "-")
}

// saveImages saves images of the host engine into one temporary
// docker-save tarball.
func (b *Backend) saveImages(ctx context.Context, refs []string) (string, func(), error) {
	rc, err := b.cli.ImageSave(ctx, refs)
	if err != nil {
		return "", nil, fmt.Errorf("images %s: not files, and the Docker engine cannot save them: %w", strings.Join(refs, " "), err)
	}
	defer rc.Close()
	f, err := os.CreateTemp("", "kubelab-image-*.tar")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.Remove(f.Name()) }
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		cleanup()
		return "", nil, fmt.Errorf("save images %s: %w", strings.Join(refs, " "), err)
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, err
	}
	return f.Name(), cleanup, nil
}

// execStdin runs cmd in a container with in as its standard input (none
// when nil) and returns its output, demultiplexed.
func (b *Backend) execStdin(ctx context.Context, id string, in io.Reader, cmd ...string) (string, error) {
	ex, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdin: in != nil, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", err
	}
	att, err := b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", err
	}
	defer att.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, att.Reader)
		close(done)
	}()
	if in != nil {
		if _, err := io.Copy(att.Conn, in); err != nil {
			return "", fmt.Errorf("send stdin: %w", err)
		}
		if cw, ok := att.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	<-done
	ins, err := b.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	text := stripMux(out.Bytes())
	if err != nil {
		return text, err
	}
	if ins.ExitCode != 0 {
		return text, fmt.Errorf("%s exited %d", strings.Join(cmd, " "), ins.ExitCode)
	}
	return text, nil
}
