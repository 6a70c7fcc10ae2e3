package load

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

// TestTemplateRender renders the templates of operation arguments as a
// run does, and leaves the loaded lab as written.
func TestTemplateRender(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  cluster: {etcd: 3}
  steps:
  - name: s
    try:
    - record: {name: before, expr: raft}
    - kubectl: {args: [get, nodes, -o, json], bind: out}
    - start: {target: "${before.leader}"}
    - kubectl: {args: [get, node, "${out.json.items[0].metadata.name}", "--v=${before.term}"]}
    - script: {command: 'echo "$${HOME}" ${ before.leader } ${p:-none} ${HOME}'}
`)
	bindings := map[string]any{
		"before": assertions.Raft{Leader: "etcd-2", Term: 4},
		"out":    assertions.CommandResult{JSON: map[string]any{"items": []any{map[string]any{"metadata": map[string]any{"name": "worker-1"}}}}},
	}
	try := lab.Spec.Steps[0].Try
	for i, want := range map[int]string{
		2: "start etcd-2",
		3: "kubectl get node worker-1 --v=4",
		4: `script echo "${HOME}" etcd-2 ${p:-none} ${HOME}`,
	} {
		op := &try[i]
		before := op.Op().Summary()
		prepared, err := op.Prepare(context.Background(), nil, bindings)
		if err != nil {
			t.Fatalf("render %s: %v", before, err)
		}
		if got := prepared.Summary(); got != want {
			t.Errorf("rendered %q = %q, want %q", before, got, want)
		}
		if after := op.Op().Summary(); after != before {
			t.Errorf("rendering changed the loaded operation: %q, was %q", after, before)
		}
	}
}
