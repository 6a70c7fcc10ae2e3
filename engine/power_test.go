package engine

import (
	"context"
	"testing"

	"kubelab.dev/kubelab/assertions"
)

// TestBindCommandResult evaluates the expressions of a lab that binds a
// command's result against such a result, as a run does.
func TestBindCommandResult(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  steps:
  - name: s
    try:
    - kubectl: {args: [get, nodes, -o, json], bind: out}
    - assert: {expr: 'out.exitCode == 0 && len(out.json.items) == 2 && out.json.items[0].metadata.name == "worker-1"'}
    - assert: {expr: 'out.stdout contains "worker-1"'}
`)
	res := assertions.CommandResult{
		Stdout: `{"items": [{"metadata": {"name": "worker-1"}}, {}]}`,
		JSON:   map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "worker-1"}}, map[string]any{}}},
	}
	for _, op := range lab.Spec.Steps[0].Try[1:] {
		ok, err := assertions.Holds(context.Background(), op.Compiled(), nil, map[string]any{"out": res})
		if !ok || err != nil {
			t.Errorf("%s = %v, %v; want true", op.Compiled().Source, ok, err)
		}
	}
}
