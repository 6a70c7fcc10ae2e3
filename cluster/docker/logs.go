package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"kubelab.dev/kubelab/cluster"
)

var _ cluster.ComponentLogger = (*Backend)(nil)

// ComponentLog implements cluster.ComponentLogger: the container's log
// (docker logs), stdout and stderr in one stream. A node's is what its
// init and its kubelet print (worker-1 and worker-1/kubelet are the
// same); its containerd and kube-proxy write to files in the node
// (/var/log/containerd.log, /var/log/kube-proxy.log), which tail reads
// there.
func (b *Backend) ComponentLog(ctx context.Context, name string, o cluster.LogOptions) (io.ReadCloser, error) {
	target, daemon, inNode := cluster.SplitNodeDaemon(name)
	c := b.get(target)
	if c == nil {
		return nil, fmt.Errorf("logs: no component %q in cluster %s", target, b.topo.Name)
	}
	if inNode && daemon != cluster.DaemonKubelet {
		return b.tailInNode(ctx, c.id, "/var/log/"+daemon+".log", o)
	}
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: o.Follow}
	if o.Tail > 0 {
		opts.Tail = strconv.Itoa(o.Tail)
	}
	rc, err := b.cli.ContainerLogs(ctx, c.id, opts)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", name, err)
	}
	return demux(rc, rc), nil
}

// tailInNode streams a file inside a container with tail. Following, the
// tail ends when the stream is closed: its shell kills it once its
// standard input, the stream's, ends (an exec cannot be killed through
// the engine's API, and would otherwise run on in the node).
func (b *Backend) tailInNode(ctx context.Context, id, path string, o cluster.LogOptions) (io.ReadCloser, error) {
	from := "+1"
	if o.Tail > 0 {
		from = strconv.Itoa(o.Tail)
	}
	cmd := []string{"tail", "-n", from, path}
	if o.Follow {
		cmd = []string{"sh", "-c", `tail -n "$1" -F "$2" & t=$!; cat > /dev/null; kill $t`, "sh", from, path}
	}
	ex, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdin: o.Follow, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", path, err)
	}
	att, err := b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", path, err)
	}
	stop := func() bool { return false }
	if o.Follow {
		stop = context.AfterFunc(ctx, att.Close)
	}
	return demux(att.Reader, closerFunc(func() error { stop(); att.Close(); return nil })), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// demux is the multiplexed stream r (a container's log, an exec's output)
// as one stream of its stdout and stderr; Close closes src.
func demux(r io.Reader, src io.Closer) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, r)
		pw.CloseWithError(err)
	}()
	return &demuxed{PipeReader: pr, src: src}
}

// demuxed is a demultiplexed stream.
type demuxed struct {
	*io.PipeReader
	src io.Closer
}

func (d *demuxed) Close() error {
	err := d.src.Close()
	d.PipeReader.Close()
	return err
}
