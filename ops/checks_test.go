package ops

import (
	"context"
	"testing"
	"time"

	"kubelab.dev/kubelab/assertions"
	obs "kubelab.dev/kubelab/observe"
)

// slowView's node internals take longer than the watch lag to read, as
// cri() does when it runs crictl in a node, and honour the context.
type slowView struct {
	View
	took time.Duration
}

func (v slowView) CRI(ctx context.Context, _ string) (assertions.CRI, error) {
	select {
	case <-time.After(v.took):
		return assertions.CRI{Sandboxes: make([]obs.Sandbox, 1)}, nil
	case <-ctx.Done():
		return assertions.CRI{}, ctx.Err()
	}
}

func (slowView) Changed() <-chan struct{} { return nil }

type viewEnv struct {
	Env
	v View
}

func (e viewEnv) View() View               { return e.v }
func (e viewEnv) Bindings() map[string]any { return nil }

// An assert of "now" whose lookup is slower than the watch lag holds when
// the cluster says it does: the lag's deadline ended the lookup, not the
// answer. One that does not hold still fails, with what was seen.
func TestAssertWithASlowLookup(t *testing.T) {
	env := viewEnv{v: slowView{took: watchLag + 100*time.Millisecond}}
	for src, pass := range map[string]bool{
		`len(cri("worker-1").sandboxes) == 1`: true,
		`len(cri("worker-1").sandboxes) == 2`: false,
	} {
		c, err := assertions.Compile(src, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		a := &AssertOp{Expr: src, compiled: c}
		_, err = a.Exec(context.Background(), env)
		if (err == nil) != pass {
			t.Errorf("assert %s: %v, want it to pass: %v", src, err, pass)
		}
	}
}
