package engine

import (
	"context"
	"errors"
	"time"

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

// summarize describes an operation in a few words for progress and reports:
// its description, or its kind's summary.
func summarize(op *Operation) string {
	if op.Description != "" {
		return op.Description
	}
	if o := op.op(); o != nil {
		return o.Summary()
	}
	return op.Kind()
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

func (x *run) Bindings() map[string]any { return x.bindings }

func (x *run) Bind(name string, v any) { x.bindings[name] = v }

func (x *run) Binary() string { return x.r.Binary }

func (x *run) Fault(a cluster.Action, subject string) { x.tl.add(EventFault, string(a), subject) }
