package features_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/assertions/assertionstest"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/features"
)

// TestDrillOnAFake runs a drill's scenarios on fake clusters: a fault is
// asked of the backend, each Then step is checked against the cluster's
// objects, a step that does not hold fails its scenario with what was
// expected and observed, and every cluster is removed after its scenario.
func TestDrillOnAFake(t *testing.T) {
	web := func(name string) assertions.Pod {
		return assertions.Pod{Name: name, Labels: map[string]string{"app": "web"}, Phase: "Running", Ready: true, Node: "worker-1"}
	}
	r, fc := enginetest.Fake(t, assertionstest.State{
		Nodes: []assertions.Node{{Name: "worker-1", Ready: true}},
		Pods:  []assertions.Pod{web("web-a"), web("web-b")},
	})
	var out bytes.Buffer
	lib := &features.Library{Runner: r, Out: &out}
	err := features.Run(t.Context(), lib, features.Options{Paths: []string{"testdata/fake.feature"}, Format: "progress", Output: &out, NoColors: true})
	if !errors.Is(err, features.ErrFailed) {
		t.Fatalf("Run = %v, want ErrFailed (the second scenario fails); output:\n%s", err, out.String())
	}
	for _, want := range []string{
		"2 scenarios (1 passed, 1 failed)",
		`count(pods("app=web"), !.deleting) = 2`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	log := fc.Log.String()
	if !strings.Contains(log, "backend: act kill kube-scheduler-1") || strings.Count(log, "backend: up") != 2 || strings.Count(log, "backend: down") != 2 {
		t.Errorf("the fake clusters' log:\n%s\nwant the kill, two clusters booted and removed", log)
	}
}

// TestDrillSkippedWhereItCannotRun: on a cluster kubelab did not make, a
// scenario whose step needs what the backend lacks (a component fault) is
// skipped from that step on, with the refusal as its reason, and counts
// neither as passed nor as failed; the other scenario runs.
func TestDrillSkippedWhereItCannotRun(t *testing.T) {
	r, fc := enginetest.Fake(t, assertionstest.State{Nodes: []assertions.Node{{Name: "worker-1", Ready: true}}})
	fc.Existing = true
	var out bytes.Buffer
	var reps []features.Report
	lib := &features.Library{Runner: r, Out: &out, OnScenario: func(rep features.Report) { reps = append(reps, rep) }}
	err := features.Run(t.Context(), lib, features.Options{Paths: []string{"testdata/fake.feature"}, Format: "progress", Output: &out, NoColors: true})
	if !errors.Is(err, features.ErrFailed) {
		t.Fatalf("Run = %v, want ErrFailed (the second scenario fails); output:\n%s", err, out.String())
	}
	if len(reps) != 2 || reps[0].Err != nil || !strings.Contains(reps[0].Skipped, "lacks component-faults") || reps[1].Skipped != "" || reps[1].Err == nil {
		t.Fatalf("reports %+v\nwant the first skipped for component-faults, the second failed", reps)
	}
	if res := reps[0].Result(); res.Status != "skipped" || res.Error != reps[0].Skipped {
		t.Errorf("the skipped scenario as a result: %s %q", res.Status, res.Error)
	}
	if strings.Contains(fc.Log.String(), "backend: act kill") {
		t.Errorf("the fake clusters' log:\n%s\nwant no kill asked of an existing cluster", fc.Log.String())
	}
}
