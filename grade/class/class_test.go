package class

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
)

func TestPackUnpackKeepsTheTree(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"exercise.yaml": "kind: Exercise\n", "solution/web.yaml": "kind: Deployment\n", "wrong/a/b.yaml": "x: 1\n"}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, ".hidden"), []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Pack(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := Unpack(b, dst); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != body {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, body)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, ".hidden")); err == nil {
		t.Error("hidden files are packed")
	}
}

func TestUnpackRefusesPathsOutside(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	_ = tw.WriteHeader(&tar.Header{Name: "../escape.yaml", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	_ = zw.Close()
	err := Unpack(buf.Bytes(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not a regular file inside it") {
		t.Fatalf("got %v, want a refusal", err)
	}
}

func TestPackRefusesWhatAConfigMapCannotCarry(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 2<<20)
	_, _ = rand.Read(big) // incompressible
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(dir); err == nil || !strings.Contains(err.Error(), "a ConfigMap can carry") {
		t.Fatalf("got %v", err)
	}
}

// A grade comes back from a pod's log exactly as it was, whatever else
// the log says, even when it takes many lines.
func TestResultRoundTripsThroughALog(t *testing.T) {
	g := &grade.Grade{
		Exercise: "pdb-drain", Learner: "ada", Status: grade.StatusGraded, Score: 7, Max: 10, PassingScore: 10,
		Started: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), Duration: 41*time.Second + 5*time.Millisecond,
		Checks:   []grade.CheckResult{{Name: "two replicas survive", Points: 3, Status: engine.Failed, Observed: noise(20000)}},
		Timeline: []engine.TimelineEvent{{At: time.Second, Kind: "fault", Subject: "worker-1", Detail: "drain"}},
	}
	var log bytes.Buffer
	log.WriteString("booting cluster\n")
	if err := WriteResult(&log, g); err != nil {
		t.Fatal(err)
	}
	log.WriteString("removed cluster\n")
	if n := strings.Count(log.String(), resultPrefix); n < 2 {
		t.Fatalf("%d result lines; want the grade in several chunks", n)
	}
	got, err := ReadResult(&log)
	if err != nil {
		t.Fatal(err)
	}
	if got.Score != 7 || got.Learner != "ada" || got.Duration != g.Duration || !got.Started.Equal(g.Started) ||
		got.Checks[0].Observed != g.Checks[0].Observed || got.Checks[0].Status != engine.Failed || got.Timeline[0] != g.Timeline[0] {
		t.Errorf("round trip changed the grade: %+v", got)
	}
	if _, err := ReadResult(strings.NewReader("kubelab-grade 1/2 abc\n")); err == nil {
		t.Error("a truncated result was accepted")
	}
	if _, err := ReadResult(strings.NewReader("nothing here\n")); err != errNoResult {
		t.Errorf("got %v, want errNoResult", err)
	}
}

// noise is n characters that do not compress.
func noise(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
	}
	return b.String()
}

func TestIndexes(t *testing.T) {
	if got := indexes("0,2-4,7"); !slices.Equal(got, []int{0, 2, 3, 4, 7}) {
		t.Errorf("got %v", got)
	}
}

// The Job grades index i from submissions/i, unprivileged, each index
// retried once.
func TestJobShape(t *testing.T) {
	j := job("kubelab/grader:abc", 4, 2, 3*time.Minute, map[string]string{"dev.kubelab.managed": "true"})
	if *j.Spec.Completions != 4 || *j.Spec.Parallelism != 2 || *j.Spec.BackoffLimitPerIndex != 1 {
		t.Errorf("completions %d, parallelism %d, backoff per index %d", *j.Spec.Completions, *j.Spec.Parallelism, *j.Spec.BackoffLimitPerIndex)
	}
	ps := j.Spec.Template.Spec
	if got := len(ps.Volumes[0].Projected.Sources); got != 5 {
		t.Errorf("%d projected sources; want the exercise and 4 submissions", got)
	}
	if p := ps.Volumes[0].Projected.Sources[4].ConfigMap.Items[0].Path; p != "submissions/3.tgz" {
		t.Errorf("last submission at %s", p)
	}
	c := ps.Containers[0]
	if *c.SecurityContext.AllowPrivilegeEscalation || !*ps.SecurityContext.RunAsNonRoot || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
		t.Error("the grading pod is not unprivileged")
	}
	if *ps.ActiveDeadlineSeconds != int64((6 * time.Minute).Seconds()) {
		t.Errorf("pod deadline %ds", *ps.ActiveDeadlineSeconds)
	}
}
