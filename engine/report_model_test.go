package engine_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/report"
)

// TestReportWriterToRenderer runs a lab (a fault, a failing check with
// observed values, a catch hook) on a fake cluster, writes its JSON
// report and reads it as the renderer does: the report carries its
// version, the values read are the values written (and write back the
// same bytes), and the HTML page shows them, the same whether drawn
// from the results in process or from the JSON file.
func TestReportWriterToRenderer(t *testing.T) {
	lab, err := load.ParseLab("lab.yaml", []byte(`apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: report-model, title: The report model}
spec:
  cluster: {etcd: 3}
  steps:
  - name: kill a member
    try:
    - kill: {target: etcd-2}
  - name: count the nodes
    try:
    - assert: {expr: 'len(nodes()) == 2'}
  catch:
  - assert: {expr: 'true'}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := enginetest.Fake(t, assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}})
	res, err := r.Run(t.Context(), lab)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := engine.WriteJSON(&js, []*engine.Result{res}); err != nil {
		t.Fatal(err)
	}

	labs, err := report.Parse(js.Bytes())
	if err != nil || len(labs) != 1 {
		t.Fatalf("Parse: %d labs, %v", len(labs), err)
	}
	if !strings.Contains(js.String(), `"apiVersion": "`+report.APIVersion+`"`) {
		t.Errorf("the report does not carry apiVersion %s:\n%s", report.APIVersion, js.String())
	}
	var again bytes.Buffer
	if err := report.WriteJSON(&again, labs); err != nil {
		t.Fatal(err)
	}
	if again.String() != js.String() {
		t.Errorf("written, read and written again, the report changed:\n%s\nthen\n%s", js.String(), again.String())
	}
	l := labs[0]
	secs := func(a, b time.Duration) bool { return (a - b).Abs() < time.Microsecond }
	if l.Lab != res.Lab || l.Title != res.Title || l.Status != res.Status || l.Error != res.Error ||
		!l.Started.Equal(res.Started) || !secs(l.Duration, res.Duration) || !secs(l.BootDuration, res.BootDuration) {
		t.Errorf("lab read back as %+v", l)
	}
	if len(l.Steps) != len(res.Steps) || len(l.Hooks) != len(res.Hooks) || len(l.Hooks) != 1 || len(l.Timeline) != len(res.Timeline) {
		t.Fatalf("steps %d/%d, hooks %d/%d, timeline %d/%d", len(l.Steps), len(res.Steps), len(l.Hooks), len(res.Hooks), len(l.Timeline), len(res.Timeline))
	}
	for i, st := range l.Steps {
		want := res.Steps[i]
		if st.Name != want.Name || st.Status != want.Status || st.Error != want.Error || !secs(st.Duration, want.Duration) || len(st.Ops) != len(want.Ops) {
			t.Errorf("step %d read back as %+v, written %+v", i, st, want)
			continue
		}
		for j, o := range st.Ops {
			w := want.Ops[j]
			if o.Kind != w.Kind || o.Line != w.Line || o.Summary != w.Summary || o.Status != w.Status || o.Error != w.Error || o.Output != w.Output ||
				!secs(o.Duration, w.Duration) || len(o.Observed) != len(w.Observed) {
				t.Errorf("operation %d.%d read back as %+v, written %+v", i, j, o, w)
			}
		}
	}
	if obs := l.Steps[1].Ops[0].Observed; len(obs) == 0 || obs[0].Expr != "len(nodes())" || obs[0].Value != "1" {
		t.Errorf("the failed check's observed values read back as %+v", obs)
	}
	for i, e := range l.Timeline {
		w := res.Timeline[i]
		if e.Kind != w.Kind || e.Subject != w.Subject || e.Detail != w.Detail || !secs(e.At, w.At) {
			t.Errorf("timeline event %d read back as %+v, written %+v", i, e, w)
		}
	}

	// The page drawn from the runner's results in process is the page
	// drawn from the JSON file.
	var direct bytes.Buffer
	if err := report.HTMLOf(&direct, []*engine.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.HTML(&page, js.Bytes()); err != nil {
		t.Fatal(err)
	}
	if direct.String() != page.String() {
		t.Error("the HTML page drawn from the results differs from the one drawn from their JSON report")
	}
	for _, want := range []string{"The report model", "kill a member", "count the nodes", "len(nodes())"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML page lacks %q", want)
		}
	}
	if _, err := report.Parse([]byte(`{"apiVersion": "kubelab.dev/report/v9", "results": []}`)); err == nil || !strings.Contains(err.Error(), `apiVersion "kubelab.dev/report/v9": this kubelab reads kubelab.dev/report/v1`) {
		t.Errorf("a report of another version: %v", err)
	}
}
