package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/internal/junit"
	"kubelab.dev/kubelab/internal/testbin"
)

// subset is what CI runs: quick specs of every SIG whose specs need a
// real node (exec, logs, DNS, Services across workers, volumes, probes)
// or the API machinery, each of which passed in the full run recorded in
// docs/conformance.md.
var subset = []string{
	"[sig-network] DNS should provide DNS for the cluster [Conformance]",
	"[sig-node] Pods should get a host IP [Conformance] [NodeConformance]",
}

func TestConformanceSubsetOnDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a docker cluster and runs upstream's e2e suite; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	err := docker.Available(ctx)
	cancel()
	if err != nil {
		t.Skipf("no Docker engine answers (%v): the conformance subset needs docker nodes", err)
	}
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(subset))
	for i, s := range subset {
		quoted[i] = regexp.QuoteMeta(s)
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "conformance.sh"), "docker", "--focus", strings.Join(quoted, "|"))
	cmd.Env = append(os.Environ(), "KUBELAB_BIN="+bin, "KUBELAB_CONFORMANCE_OUT="+out, "KUBELAB_HOME="+filepath.Join(out, "home"))
	b, err := cmd.CombinedOutput()
	t.Logf("hack/conformance.sh:\n%s", tail(string(b), 40))
	s, rerr := junit.Read(filepath.Join(out, "junit.xml"))
	if rerr != nil {
		t.Fatalf("no report (script: %v): %v", err, rerr)
	}
	for _, f := range s.Failures {
		t.Errorf("failed: %s\n    %s", f.Name, f.First)
	}
	for _, f := range s.Skips {
		t.Errorf("skipped: %s\n    %s", f.Name, f.First)
	}
	ran := map[string]bool{}
	for _, p := range s.Passed {
		ran[p] = true
	}
	for _, want := range subset {
		if !ran[want] {
			t.Errorf("did not pass: %s", want)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("hack/conformance.sh: %v", err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
