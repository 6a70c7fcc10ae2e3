package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/moby/moby/client"

	"kubelab.dev/kubelab/cluster"
)

// LoadImage puts an image into the containerd of every worker of the
// cluster, as `kind load docker-image` does: ref is a file made by
// `docker save`, or an image of the host's Docker engine. Pods then run it
// as loaded, whatever their imagePullPolicy says for its tag (see
// preload.go): no registry is needed.
func (b *Backend) LoadImage(ctx context.Context, ref string, say func(string)) error {
	tarPath, cleanup, err := b.imageTar(ctx, ref)
	if err != nil {
		return err
	}
	defer cleanup()
	comps, err := b.Components(ctx)
	if err != nil {
		return err
	}
	n := 0
	var images []string
	for _, c := range comps {
		if c.Role != cluster.RoleNode || c.State != cluster.StateRunning {
			continue
		}
		f, err := os.Open(tarPath)
		if err != nil {
			return err
		}
		out, err := b.execStdin(ctx, b.get(c.Name).id, f, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack=false", "-")
		f.Close()
		if err != nil {
			return fmt.Errorf("load %s into %s: %w: %s", ref, c.Name, err, strings.TrimSpace(out))
		}
		say(fmt.Sprintf("%s: %s", c.Name, strings.TrimSpace(out)))
		images = append(images, importedImages(out)...)
		n++
	}
	if n == 0 {
		return fmt.Errorf("load %s: cluster %s has no running worker", ref, b.topo.Name)
	}
	cs, err := b.clientset()
	if err != nil {
		return err
	}
	return markPreloaded(ctx, cs, images)
}

// imageTar is ref as a docker-save tarball: the file itself, or the host
// engine's image saved to a temporary file.
func (b *Backend) imageTar(ctx context.Context, ref string) (string, func(), error) {
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		return ref, func() {}, nil
	}
	rc, err := b.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return "", nil, fmt.Errorf("image %s: not a file, and the Docker engine cannot save it: %w", ref, err)
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
		return "", nil, fmt.Errorf("save image %s: %w", ref, err)
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
