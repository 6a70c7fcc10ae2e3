package junit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5"><testsuite name="Kubernetes e2e suite">
<testcase name="[SynchronizedBeforeSuite]" status="passed" time="1"></testcase>
<testcase name="[It] [sig-node] Pods should get a host IP [Conformance] [NodeConformance] [sig-node, NodeConformance, Conformance]" status="passed" time="2.1"></testcase>
<testcase name="[It] [sig-network] DNS should provide DNS for the cluster [Conformance] [sig-network, Conformance]" status="failed" time="300"><failure message="timed out">
  [FAILED] timed out waiting for the condition
more</failure></testcase>
<testcase name="[It] [sig-network] DNS should provide DNS for the cluster [Provider:gce] [sig-network]" status="skipped" time="0"><skipped message="skipped - Only supported for providers [gce] (not skeleton)"></skipped></testcase>
<testcase name="[It] [sig-apps] Job should run a job [Conformance] [sig-apps, Conformance]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>`

func TestReadCountsBySIGAndKeepsFirstLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != (Counts{Passed: 1, Failed: 1, Skipped: 1}) {
		t.Errorf("total %+v, want 1 passed, 1 failed, 1 skipped (the focus-filtered Job spec is not counted)", s.Total)
	}
	if got := s.Passed; len(got) != 1 || got[0] != "[sig-node] Pods should get a host IP [Conformance] [NodeConformance]" {
		t.Errorf("passed %q: want the spec's text without [It] and labels", got)
	}
	if len(s.Failures) != 1 || s.Failures[0].First != "timed out" {
		t.Errorf("failures %+v, want the failure's message", s.Failures)
	}
	if n := s.BySIG["network"]; n == nil || *n != (Counts{Failed: 1, Skipped: 1}) {
		t.Errorf("network %+v", n)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"network       0       1        1", "FAIL [sig-network] DNS should provide DNS for the cluster [Conformance] (300s)", "Only supported for providers [gce]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReadTakesTheLastRunOfASpec(t *testing.T) {
	dir := t.TempDir()
	full, rerun := filepath.Join(dir, "full.xml"), filepath.Join(dir, "rerun.xml")
	if err := os.WriteFile(full, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	again := `<testsuites><testsuite>
<testcase name="[It] [sig-network] DNS should provide DNS for the cluster [Conformance] [sig-network, Conformance]" status="passed" time="3"></testcase>
</testsuite></testsuites>`
	if err := os.WriteFile(rerun, []byte(again), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(full, rerun)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != (Counts{Passed: 2, Skipped: 1}) || len(s.Failures) != 0 {
		t.Errorf("total %+v failures %v: want the rerun's pass to replace the failure", s.Total, s.Failures)
	}
}
