package load

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// TestConvertible checks that every field a lab file may carry has its
// counterpart in the types that run, under the same name, and that those
// have no field a file cannot set.
func TestConvertible(t *testing.T) {
	for _, c := range []struct{ dst, src reflect.Type }{
		{reflect.TypeFor[Lab](), reflect.TypeFor[v1alpha1.Lab]()},
		{reflect.TypeFor[ops.Operation](), reflect.TypeFor[v1alpha1.Operation]()},
		{reflect.TypeFor[cluster.Topology](), reflect.TypeFor[v1alpha1.Topology]()},
	} {
		if err := Convertible(c.dst, c.src); err != nil {
			t.Errorf("%s from %s: %v", c.dst, c.src, err)
		}
	}
}

func TestConvertibleRefusesDrift(t *testing.T) {
	type wire struct {
		A string `yaml:"a"`
		B int    `yaml:"b"`
	}
	type missing struct {
		A string `yaml:"a"`
	}
	type renamed struct {
		A string `yaml:"aa"`
		B int    `yaml:"b"`
	}
	type retyped struct {
		A string `yaml:"a"`
		B []int  `yaml:"b"`
	}
	type extra struct {
		A string `yaml:"a"`
		B int    `yaml:"b"`
		C bool   `yaml:"c"`
	}
	type internal struct {
		A        string `yaml:"a"`
		B        int    `yaml:"b"`
		Derived  bool   `yaml:"-"`
		compiled string //nolint:unused // a field no file sets
	}
	for _, c := range []struct {
		dst  reflect.Type
		want string
	}{
		{reflect.TypeFor[missing](), "has no field B"},
		{reflect.TypeFor[renamed](), `written "a", but`},
		{reflect.TypeFor[retyped](), "cannot become"},
		{reflect.TypeFor[extra](), "extra.C is in no file"},
		{reflect.TypeFor[internal](), ""},
	} {
		err := Convertible(c.dst, reflect.TypeFor[wire]())
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.dst, err, c.want)
		}
	}
}

// TestConvertCopiesEveryKindOfField converts a lab with a value in fields
// of each shape: scalars, durations, pointers, lists, maps, nested
// structs and the operation union.
func TestConvertCopiesEveryKindOfField(t *testing.T) {
	no, code, label := false, 3, "x"
	wire := v1alpha1.Lab{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.KindLab,
		Metadata: v1alpha1.Metadata{Name: "n", Duration: v1alpha1.Duration{Duration: time.Minute}},
		Spec: v1alpha1.Spec{
			Timeout: v1alpha1.Duration{Duration: 2 * time.Minute},
			Cluster: v1alpha1.Topology{Etcd: 3, Audit: &no, Nodes: []v1alpha1.NodeSpec{{Name: "a", Labels: map[string]string{"k": "v"},
				Taints: []v1alpha1.Taint{{Key: "k", Effect: "NoSchedule"}}}},
				Timings:   v1alpha1.Timings{LeaseDuration: v1alpha1.Duration{Duration: time.Second}},
				Scheduler: v1alpha1.SchedulerSpec{Config: map[string]any{"profiles": []any{"p"}}}},
			Steps: []v1alpha1.Step{{Name: "s", Try: []v1alpha1.Operation{
				{Kill: &v1alpha1.TargetOp{Target: "etcd-leader"}, Timeout: v1alpha1.Duration{Duration: time.Second}},
				{Script: &v1alpha1.ScriptOp{Command: "true", Retry: &v1alpha1.Retry{ExitCode: &code}}},
				{Label: &v1alpha1.LabelOp{Labels: map[string]*string{"a": &label, "b": nil}}},
				{Start: &v1alpha1.TargetOp{}},
			}}},
			Cleanup: []v1alpha1.Operation{{Sleep: &v1alpha1.SleepOp{Duration: v1alpha1.Duration{Duration: time.Millisecond}}}},
		}}
	var lab Lab
	Convert(&lab, &wire)
	s := lab.Spec
	try := s.Steps[0].Try
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"metadata", lab.Metadata, wire.Metadata},
		{"timeout", s.Timeout.Duration, 2 * time.Minute},
		{"etcd", s.Cluster.Etcd, 3},
		{"audit", s.Cluster.Audit, &no},
		{"node", s.Cluster.Nodes[0].Taints[0].Effect, "NoSchedule"},
		{"labels", s.Cluster.Nodes[0].Labels["k"], "v"},
		{"lease", s.Cluster.Timings.LeaseDuration.Duration, time.Second},
		{"scheduler", s.Cluster.Scheduler.Config["profiles"], []any{"p"}},
		{"kill", try[0].Kill.Target, "etcd-leader"},
		{"op timeout", try[0].Timeout.Duration, time.Second},
		{"kinds", []string{try[0].Kind(), try[1].Kind(), try[2].Kind(), try[3].Kind()}, []string{"kill", "script", "label", "start"}},
		{"exit code", *try[1].Script.Retry.ExitCode, 3},
		{"label", try[2].Label.Labels, map[string]*string{"a": &label, "b": nil}},
		{"empty body", *try[3].Start, ops.TargetOp{}},
		{"sleep", s.Cleanup[0].Sleep.Duration.Duration, time.Millisecond},
		{"no catch", s.Catch == nil, true},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}
