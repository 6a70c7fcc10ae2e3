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
// container's init prints; its kubelet's and containerd's own are in the
// node (kubelab node exec).
func (b *Backend) ComponentLog(ctx context.Context, name string, o cluster.LogOptions) (io.ReadCloser, error) {
	c := b.get(name)
	if c == nil {
		return nil, fmt.Errorf("logs: no component %q in cluster %s", name, b.topo.Name)
	}
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: o.Follow}
	if o.Tail > 0 {
		opts.Tail = strconv.Itoa(o.Tail)
	}
	rc, err := b.cli.ContainerLogs(ctx, c.id, opts)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", name, err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, rc)
		pw.CloseWithError(err)
	}()
	return &demuxed{PipeReader: pr, src: rc}, nil
}

// demuxed is a container's log stream, demultiplexed.
type demuxed struct {
	*io.PipeReader
	src io.Closer
}

func (d *demuxed) Close() error {
	err := d.src.Close()
	d.PipeReader.Close()
	return err
}
