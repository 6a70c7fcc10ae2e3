package features_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/report"
)

// htmlOf draws results as the HTML report, through the JSON report.
func htmlOf(t *testing.T, results []*engine.Result) string {
	t.Helper()
	var js, page bytes.Buffer
	if err := engine.WriteJSON(&js, results); err != nil {
		t.Fatal(err)
	}
	if err := report.HTML(&page, js.Bytes()); err != nil {
		t.Fatal(err)
	}
	return page.String()
}

// TestReportAsHTMLReport draws a scenario's report as a lab section: its
// Gherkin steps as step rows with the failure, the timeline with the
// fault, and the recovery time.
func TestReportAsHTMLReport(t *testing.T) {
	rep := features.Report{
		Feature: "features/etcd-leader.feature", Scenario: "Kill the leader", Err: errors.New("no new leader within 10s"),
		Duration: 30 * time.Second, BootDuration: 8 * time.Second,
		Steps: []engine.StepResult{
			{Name: "Given a lab cluster with 3 etcd members", Status: engine.Passed, Duration: 8 * time.Second},
			{Name: "When I kill the etcd leader", Status: engine.Passed, Duration: time.Second,
				Ops: []engine.OpResult{{Kind: "kill", Summary: "kill etcd-leader", Status: engine.Passed}}},
			{Name: "Then within 10s a new etcd leader is elected", Status: engine.Failed, Duration: 10 * time.Second,
				Error: "no new leader within 10s"},
			{Name: "And writes succeed", Status: engine.Skipped},
		},
		Timeline: []engine.TimelineEvent{
			{At: 0, Kind: engine.EventStep, Subject: "I kill the etcd leader", Detail: "started"},
			{At: time.Second, Kind: engine.EventFault, Subject: "kill", Detail: "etcd-leader=etcd-1"},
			{At: 2 * time.Second, Kind: engine.EventStep, Subject: "I kill the etcd leader", Detail: "passed"},
		},
		Recovery: []engine.Recovery{{Fault: "kill etcd-leader=etcd-1", Event: "new etcd leader", After: 1200 * time.Millisecond,
			FaultAt: time.Second, Describe: "kill etcd-leader=etcd-1 -> new etcd leader (etcd-2) after 1.2s"}},
	}
	html := htmlOf(t, features.Results([]features.Report{rep}))
	if n := len(regexp.MustCompile(`<tr class="step"`).FindAllString(html, -1)); n != len(rep.Steps) {
		t.Errorf("%d step rows, want one per step (%d)", n, len(rep.Steps))
	}
	for _, want := range []string{
		`data-lab="etcd-leader/kill-the-leader"`, "<h2>Kill the leader <span class=\"status failed\">failed</span>",
		"<code>features/etcd-leader.feature</code>", "cluster up in 8.00s", "<b>no new leader within 10s</b>",
		`<tr class="step" data-status="failed"><td><b>Then within 10s a new etcd leader is elected</b><pre>no new leader within 10s</pre>`,
		`<tr class="step" data-status="skipped"><td><b>And writes succeed</b>`, "kill etcd-leader",
		`class="timeline"`, `<line class="marker"`, "after 1.2s</li>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", html)
	}
}

// TestReportRecordsEveryStep runs a scenario whose third step (after a
// Background) is undefined: its report has every Gherkin step with the
// keyword the file gives it, the undefined one failed with the
// suggestions and the one after it skipped.
func TestReportRecordsEveryStep(t *testing.T) {
	noCluster := &engine.Runner{Backend: func(cluster.Topology) (cluster.Backend, error) {
		return nil, errors.New("no cluster in this test")
	}}
	var reps []features.Report
	lib := &features.Library{Runner: noCluster, OnScenario: func(r features.Report) { reps = append(reps, r) }}
	var out bytes.Buffer
	err := features.Run(t.Context(), lib, features.Options{Paths: []string{"testdata/undefined-after-and.feature"}, Format: "progress", Output: &out, NoColors: true})
	if !errors.Is(err, features.ErrFailed) {
		t.Fatalf("Run = %v, want ErrFailed; output:\n%s", err, out.String())
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports, want 1", len(reps))
	}
	type step struct {
		name   string
		status engine.Status
	}
	want := []step{
		{"Given a lab cluster with 3 etcd members", engine.Passed},
		{"Given etcd compaction interval 5s", engine.Passed},
		{"And I kil the etcd leader", engine.Failed},
		{"Then within 10s a new etcd leader is elected", engine.Skipped},
	}
	var got []step
	for _, s := range reps[0].Steps {
		got = append(got, step{s.Name, s.Status})
	}
	if len(got) != len(want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: %v, want %v", i, got[i], want[i])
		}
	}
	if e := reps[0].Steps[2].Error; !strings.Contains(e, "matches no phrase of the step library") {
		t.Errorf("the undefined step's error %q does not name the closest phrases", e)
	}
	html := htmlOf(t, features.Results(reps))
	if n := strings.Count(html, `<tr class="step"`); n != len(want) {
		t.Errorf("%d step rows, want %d", n, len(want))
	}
	if strings.Contains(html, "cluster up in") {
		t.Error("the report gives a boot time for a scenario that booted no cluster")
	}
}
