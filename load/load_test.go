package load

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/internal/loadertest"
	"kubelab.dev/kubelab/ops"
)

func TestLoadValid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid fixtures: %v", err)
	}
	used := map[string]bool{}
	for _, f := range files {
		lab, err := ReadLab(f)
		if err != nil {
			t.Errorf("ReadLab(%s):\n%v", f, err)
			continue
		}
		for path, op := range lab.Operations() {
			used[op.Kind()] = true
			if op.Pos().Line == 0 {
				t.Errorf("%s: %s has no position", f, path)
			}
			if op.Timeout.Duration <= 0 {
				t.Errorf("%s: %s has no timeout", f, path)
			}
		}
	}
	for _, k := range ops.OperationKinds() {
		if !used[k] {
			t.Errorf("no valid fixture uses operation %q", k)
		}
	}
}

func TestLoadInvalid(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 35 {
		t.Fatalf("%d invalid fixtures, want at least 35", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			wants := loadertest.Wants(t, f)
			if len(wants) == 0 {
				t.Fatalf("%s has no # want: lines", f)
			}
			lab, err := ReadLab(f)
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("ReadLab = %v, %v; want *Problems", lab, err)
			}
			if lab != nil {
				t.Errorf("Load returned a lab along with problems")
			}
			loadertest.CheckProblems(t, wants, ps.List)
		})
	}
}

func mustLoad(t *testing.T, src string) *Lab {
	t.Helper()
	lab, err := ParseLab("testdata/inline.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseLab:\n%v", err)
	}
	return lab
}

const header = `apiVersion: kubelab.dev/v1alpha1
kind: Lab
metadata: {name: t, title: T}
`

func TestDefaults(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  steps:
  - name: s
    try:
    - patch: {kind: Deployment, name: web, patch: "spec: {replicas: 2}"}
    - label: {name: worker-1, labels: {a: b, gone: null}}
    - sleep: {duration: 5s}
    - assert: {expr: "true", within: 1m}
    - drain: {node: worker-1}
    - kill: {target: etcd-leader}
      timeout: 5s
`)
	if got := lab.Spec.Timeout.Duration; got != DefaultLabTimeout {
		t.Errorf("spec.timeout = %v, want %v", got, DefaultLabTimeout)
	}
	if c := lab.Spec.Cluster; c.Name != "kubelab" || c.Etcd != 1 || len(c.Nodes) != 1 {
		t.Errorf("cluster defaults not applied: %+v", c)
	}
	try := lab.Spec.Steps[0].Try
	if try[0].Patch.Type != "strategic" {
		t.Errorf("patch.type = %q, want strategic", try[0].Patch.Type)
	}
	if try[1].Label.Kind != "Node" {
		t.Errorf("label.kind = %q, want Node", try[1].Label.Kind)
	}
	if v, ok := try[1].Label.Labels["gone"]; !ok || v != nil {
		t.Errorf("label gone = %v, %v; want a nil value (remove)", v, ok)
	}
	wantTimeouts := []time.Duration{30 * time.Second, 30 * time.Second, 35 * time.Second, 2 * time.Minute, 2 * time.Minute, 5 * time.Second}
	for i, w := range wantTimeouts {
		if got := try[i].Timeout.Duration; got != w {
			t.Errorf("%s timeout = %v, want %v", try[i].Kind(), got, w)
		}
	}
}

func TestDefaultTimeout(t *testing.T) {
	for kind, want := range map[string]time.Duration{
		"apply": 30 * time.Second, "label": 30 * time.Second, "uncordon": 30 * time.Second,
		"wait": time.Minute, "assert": time.Minute, "nodeUp": time.Minute, "script": time.Minute,
		"drain": 2 * time.Minute,
	} {
		if got := ops.DefaultTimeout(kind); got != want {
			t.Errorf("DefaultTimeout(%q) = %v, want %v", kind, got, want)
		}
	}
}

func TestCompiledAndBindings(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  cluster: {etcd: 3}
  steps:
  - name: s
    try:
    - record: {name: before, expr: raft}
    - kill: {target: etcd-leader}
    - wait: {expr: "raft.term > before.term"}
  finally:
  - error: {expr: "before.leader == raft.leader"}
`)
	try := lab.Spec.Steps[0].Try
	if c := try[0].Compiled(); c == nil || c.Type != reflect.TypeFor[assertions.Raft]() {
		t.Errorf("record compiled = %+v, want type Raft", c)
	}
	if try[1].Compiled() != nil {
		t.Errorf("kill has a compiled expression")
	}
	if c := try[2].Compiled(); c == nil || c.Source != "raft.term > before.term" {
		t.Errorf("wait compiled = %+v", c)
	}
	if lab.Spec.Finally[0].Compiled() == nil {
		t.Errorf("finally expression not compiled")
	}
	if got := lab.Bindings(); len(got) != 1 || got["before"] != reflect.TypeFor[assertions.Raft]() {
		t.Errorf("Bindings() = %v", got)
	}
	if p := try[2].Pos(); p != (ops.Pos{Line: 11, Column: 7}) {
		t.Errorf("wait Pos() = %v, want 11:7", p)
	}
	if p := lab.StepPos(0); p != (ops.Pos{Line: 7, Column: 5}) {
		t.Errorf("step Pos() = %v, want 7:5", p)
	}
	if lab.File() != "testdata/inline.yaml" {
		t.Errorf("File() = %q", lab.File())
	}
}

func TestObjects(t *testing.T) {
	lab := mustLoad(t, header+`spec:
  steps:
  - name: s
    try:
    - apply: {file: manifests/web.yaml}
    - create:
        manifest: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: a}
          ---
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: b}
`)
	try := lab.Spec.Steps[0].Try
	var kinds []string
	for _, o := range try[0].Apply.Objects() {
		kinds = append(kinds, o.Content["kind"].(string))
	}
	if !slices.Equal(kinds, []string{"Deployment", "Service"}) || try[0].Apply.Objects()[1].File != filepath.Join("testdata", "manifests", "web.yaml") {
		t.Errorf("file objects = %v", try[0].Apply.Objects())
	}
	objs := try[1].Create.Objects()
	if len(objs) != 2 || objs[1].Pos != (ops.Pos{Line: 15, Column: 11}) || objs[1].File != "testdata/inline.yaml" {
		t.Errorf("inline objects = %+v, want the second at testdata/inline.yaml:15:11", objs)
	}
	if spec, ok := try[1].Spec().(*ops.ManifestOp); !ok || spec != try[1].Create {
		t.Errorf("Spec() = %T, want the *ops.ManifestOp of create", try[1].Spec())
	}
}

func TestProblemsError(t *testing.T) {
	ps := &Problems{}
	ps.add("b.yaml", ops.Pos{Line: 1, Column: 1}, "", "third")
	ps.add("a.yaml", ops.Pos{Line: 9, Column: 2}, "spec", "second")
	ps.add("a.yaml", ops.Pos{Line: 3, Column: 7}, "metadata.name", "first")
	err := ps.orNil()
	want := "a.yaml:3:7: metadata.name: first\na.yaml:9:2: spec: second\nb.yaml:1:1: third"
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant\n%s", err, want)
	}
	if (&Problems{}).orNil() != nil {
		t.Errorf("no problems is not nil")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := ReadLab("testdata/does-not-exist.yaml")
	var ps *Problems
	if err == nil || errors.As(err, &ps) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, want a wrapped os.ErrNotExist", err)
	}
}

func TestSuggest(t *testing.T) {
	for name, want := range map[string]string{"stpes": "steps", "kil": "kill", "nodedown": "nodeDown", "zzzzzz": ""} {
		got := suggest(name, append(ops.OperationKinds(), "steps"))
		if want == "" && got != "" || want != "" && !strings.Contains(got, `"`+want+`"`) {
			t.Errorf("suggest(%q) = %q, want %q", name, got, want)
		}
	}
}
