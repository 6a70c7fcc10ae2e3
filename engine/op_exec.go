package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// exec runs one operation through its kind.
func (x *run) exec(ctx context.Context, op *ops.Operation) (string, error) {
	o, err := op.Prepare(ctx, x.live, x.Bindings())
	if err != nil {
		return "", err
	}
	return o.Exec(ctx, x)
}

// A run is the environment its operations run in.
var _ ops.Env = (*run)(nil)

func (x *run) Cluster() *cluster.Cluster { return x.c }

func (x *run) Clients() (*ops.Clients, error) {
	a, err := x.api()
	if err != nil {
		return nil, err
	}
	return a.ops, nil
}

func (x *run) View() ops.View { return x.live }

// Bindings are the recorded values, with the probes' and the background
// operations' records as of now when any run.
func (x *run) Bindings() map[string]any {
	x.bg.mu.Lock()
	defer x.bg.mu.Unlock()
	if len(x.bg.probes) == 0 && len(x.bg.ops) == 0 {
		return x.bindings
	}
	b := maps.Clone(x.bindings)
	if len(x.bg.probes) > 0 {
		probes := map[string]assertions.Probe{}
		for name, read := range x.bg.probes {
			probes[name] = read()
		}
		b[ops.ProbesBinding] = probes
	}
	if len(x.bg.ops) > 0 {
		bops := map[string]assertions.Background{}
		for name, rec := range x.bg.ops {
			bops[name] = rec.snapshot()
		}
		b[ops.BackgroundBinding] = bops
	}
	return b
}

// background is the work operations leave running (probes, operations
// started with background: NAME) until the lab or session ends.
type background struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	probes map[string]func() assertions.Probe
	ops    map[string]*backgroundOp
}

// backgroundOp is the record of an operation running in the background.
type backgroundOp struct {
	mu    sync.Mutex
	start time.Time
	end   time.Time
	rec   assertions.Background
}

func (b *backgroundOp) snapshot() assertions.Background {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.rec
	end := b.end
	if end.IsZero() {
		end = time.Now()
	}
	r.Seconds = end.Sub(b.start).Seconds()
	return r
}

func (b *backgroundOp) finish(out string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.end = time.Now()
	b.rec.Done, b.rec.Passed, b.rec.Output = true, err == nil, out
	if err != nil {
		b.rec.Error = err.Error()
	}
}

// startBackground runs op in the background, within its own time limit,
// and reports its end in the progress and the timeline; it is stopped
// when the lab or session ends.
func (x *run) startBackground(step string, op *ops.Operation) {
	rec := &backgroundOp{start: time.Now()}
	x.bg.mu.Lock()
	if x.bg.ops == nil {
		x.bg.ops = map[string]*backgroundOp{}
	}
	x.bg.ops[op.Background] = rec
	x.bg.mu.Unlock()
	// Templates are rendered now, from the bindings the step sees.
	o, perr := op.Prepare(context.Background(), x.live, x.Bindings())
	x.Go(func(bctx context.Context) {
		ctx, cancel := context.WithTimeout(bctx, op.TimeLimit())
		defer cancel()
		out, err := "", perr
		if err == nil {
			out, err = o.Exec(ctx, x)
		}
		status := string(Passed)
		switch {
		case bctx.Err() != nil && err != nil:
			status, err = "stopped at the end", fmt.Errorf("stopped at the end: %w", err)
		case err != nil:
			status = string(Failed)
		}
		rec.finish(out, err)
		msg := fmt.Sprintf("background %s (%s): %s", op.Background, op.Summary(), status)
		if status == string(Failed) {
			first, _, _ := strings.Cut(err.Error(), "\n")
			msg += ": " + first
		}
		x.report(Progress{Step: step, Message: msg})
		if x.tl != nil {
			x.tl.add(EventStep, "background "+op.Background, status)
		}
	})
}

func (x *run) Go(f func(ctx context.Context)) {
	x.bg.mu.Lock()
	if x.bg.ctx == nil {
		x.bg.ctx, x.bg.cancel = context.WithCancel(context.Background())
	}
	ctx := x.bg.ctx
	x.bg.wg.Add(1)
	x.bg.mu.Unlock()
	go func() { defer x.bg.wg.Done(); f(ctx) }()
}

func (x *run) Probe(name string, read func() assertions.Probe) {
	x.bg.mu.Lock()
	defer x.bg.mu.Unlock()
	if x.bg.probes == nil {
		x.bg.probes = map[string]func() assertions.Probe{}
	}
	x.bg.probes[name] = read
}

// stopBackground ends the background work and waits for it; the probes'
// records stay readable.
func (x *run) stopBackground() {
	x.bg.mu.Lock()
	cancel := x.bg.cancel
	x.bg.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	x.bg.wg.Wait()
}

// Bind records a value; under the background lock, as background
// operations read the bindings while the steps write them.
func (x *run) Bind(name string, v any) {
	x.bg.mu.Lock()
	defer x.bg.mu.Unlock()
	x.bindings[name] = v
}

func (x *run) Binary() string { return x.r.Binary }

func (x *run) Fault(a cluster.Action, subject string, at time.Time) {
	x.tl.addAt(at, EventFault, string(a), subject)
}
