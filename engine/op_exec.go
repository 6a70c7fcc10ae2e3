package engine

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine/ops"
)

// exec runs one operation through its kind.
func (x *run) exec(ctx context.Context, op *Operation) (string, error) {
	o := op.op()
	if o == nil {
		return "", errors.New("operation has no kind")
	}
	if len(op.templates) > 0 {
		body, err := rendered(ctx, op.Spec(), op.templates, x.live, x.bindings)
		if err != nil {
			return "", err
		}
		k, _ := ops.Lookup(op.Kind())
		o = k.Bind(body)
	}
	return o.Exec(ctx, x)
}

// Summary describes the operation in a few words for progress and
// reports: its description, or its kind's summary.
func (o *Operation) Summary() string {
	if o.Description != "" {
		return o.Description
	}
	if k := o.op(); k != nil {
		return k.Summary()
	}
	return o.Kind()
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error { return ops.Sleep(ctx, d) }

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

// Bindings are the recorded values, with the probes' records as of now
// when probes run.
func (x *run) Bindings() map[string]any {
	x.bg.mu.Lock()
	defer x.bg.mu.Unlock()
	if len(x.bg.probes) == 0 {
		return x.bindings
	}
	b := maps.Clone(x.bindings)
	probes := map[string]assertions.Probe{}
	for name, read := range x.bg.probes {
		probes[name] = read()
	}
	b[ops.ProbesBinding] = probes
	return b
}

// background is the work operations leave running (probes) until the lab
// or session ends.
type background struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	probes map[string]func() assertions.Probe
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

func (x *run) Bind(name string, v any) { x.bindings[name] = v }

func (x *run) Binary() string { return x.r.Binary }

func (x *run) Fault(a cluster.Action, subject string) { x.tl.add(EventFault, string(a), subject) }
