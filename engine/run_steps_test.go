package engine_test

import (
	"context"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/load"
)

const stepsLab = `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: step-by-step, title: Step by step}
spec:
  steps:
  - name: record the nodes
    try:
    - record: {name: before, expr: 'len(nodes())'}
  - name: compare
    try:
    - assert: {expr: 'before == 1'}
  - name: a wrong count
    try:
    - assert: {expr: 'len(nodes()) == 2'}
  - name: never reached
    try:
    - assert: {expr: 'true'}
  finally:
  - assert: {expr: 'true'}
`

// A lab run step by step on a session does what Runner.Run does with it:
// the same statuses, the bindings carried from step to step, the steps
// after a failure skipped and the hooks run at the end.
func TestStepperDoesWhatRunDoes(t *testing.T) {
	lab, err := load.ParseLab("lab.yaml", []byte(stepsLab))
	if err != nil {
		t.Fatal(err)
	}
	state := assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}}
	r, _ := enginetest.Fake(t, state)
	whole, err := r.Run(t.Context(), lab)
	if err != nil {
		t.Fatal(err)
	}

	r, _ = enginetest.Fake(t, state)
	s, err := r.StartFor(t.Context(), lab.Metadata.Name, lab.Spec.Cluster, lab.Needs())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = s.Close(context.Background(), false) }()
	p := s.Steps(lab)
	first, ok := p.Step(t.Context())
	if !ok || first.Name != "record the nodes" || first.Status != engine.Passed || p.Next() != 1 {
		t.Fatalf("first step: %+v ok=%t next=%d", first, ok, p.Next())
	}
	res := p.Finish(t.Context())
	if _, ok := p.Step(t.Context()); ok {
		t.Error("a step ran after Finish")
	}
	if res.Status != whole.Status || res.Status != engine.Failed || len(res.Steps) != len(whole.Steps) || len(res.Hooks) != len(whole.Hooks) || len(res.Hooks) != 1 {
		t.Fatalf("step by step: %s, %d steps, %d hooks; run: %s, %d steps, %d hooks (%s)", res.Status, len(res.Steps), len(res.Hooks), whole.Status, len(whole.Steps), len(whole.Hooks), res.Error)
	}
	for i, st := range res.Steps {
		if st.Name != whole.Steps[i].Name || st.Status != whole.Steps[i].Status {
			t.Errorf("step %d: %s %s, run: %s %s", i, st.Name, st.Status, whole.Steps[i].Name, whole.Steps[i].Status)
		}
	}
	if res.Steps[3].Status != engine.Skipped || res.Steps[2].Status != engine.Failed || len(res.Steps[2].Ops[0].Observed) == 0 {
		t.Errorf("after the failure: %+v", res.Steps[2:])
	}
}
