package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"kubelab.dev/kubelab/cluster"
)

var _ cluster.ComponentLogger = (*Backend)(nil)

// ComponentLog implements cluster.ComponentLogger: the component's log
// file, which every start of it appends to (each start begins with a
// "---- kubelab: starting" line). A simulated node has none: kwok's is
// the log of the process that runs every node.
func (b *Backend) ComponentLog(ctx context.Context, name string, o cluster.LogOptions) (io.ReadCloser, error) {
	if node, daemon, ok := cluster.SplitNodeDaemon(name); ok {
		return nil, fmt.Errorf("logs of %s: node %s is simulated by kwok: it runs no %s: %w", name, node, daemon, cluster.ErrNoLog)
	}
	p := b.proc(name)
	if p == nil {
		return nil, fmt.Errorf("logs: no component %q in cluster %s", name, b.name)
	}
	if p.Virtual || p.Log == "" {
		return nil, fmt.Errorf("logs of %s: it is a node simulated by kwok, with no process (kwok's log is that of every node): %w", name, cluster.ErrNoLog)
	}
	f, err := os.Open(p.Log)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", name, err)
	}
	if o.Tail > 0 {
		off, err := tailOffset(f, o.Tail)
		if err == nil {
			_, err = f.Seek(off, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("logs of %s: %w", name, err)
		}
	}
	if !o.Follow {
		return f, nil
	}
	return &follower{ctx: ctx, f: f}, nil
}

// tailOffset is the offset in f where its last n lines begin: it reads
// backwards from the end in blocks, so that a long log is not read whole.
func tailOffset(f *os.File, n int) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := st.Size()
	const block = 32 << 10
	buf := make([]byte, block)
	seen := 0
	for pos := end; pos > 0; {
		size := min(int64(block), pos)
		pos -= size
		if _, err := f.ReadAt(buf[:size], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		chunk := buf[:size]
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || pos+int64(i) == end-1 {
				continue // a newline that ends the file ends the last line
			}
			if seen++; seen == n {
				return pos + int64(i) + 1, nil
			}
		}
	}
	return 0, nil
}

// follower reads a file as it grows, as tail -f does, until ctx ends:
// at its end, it looks again every followEvery.
type follower struct {
	ctx context.Context
	f   *os.File
}

const followEvery = 200 * time.Millisecond

func (r *follower) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 || !errors.Is(err, io.EOF) {
			return n, err
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(followEvery):
		}
	}
}

func (r *follower) Close() error { return r.f.Close() }

// tail is the last n lines of a file, for error messages; "" when it
// cannot be read.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	off, err := tailOffset(f, n)
	if err != nil {
		return ""
	}
	raw, _ := io.ReadAll(io.NewSectionReader(f, off, 1<<20))
	return string(bytes.TrimRight(raw, "\n"))
}
