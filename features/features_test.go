package features_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/internal/testbin"
)

// TestMain lets four tests of clusters run at once (go test's default
// -parallel is one per core): TestFeatures' three workers and the docker
// drills share them.
func TestMain(m *testing.M) { os.Exit(enginetest.Main(m, featureWorkers+1)) }

// TestFeatures runs every drill on real embedded clusters, three feature
// files at a time, as subtests named after the scenarios. Reports
// (godog's pretty text, cucumber JSON and JUnit XML, one of each per
// feature file) go to $KUBELAB_REPORTS or a temporary directory;
// KUBELAB_KEEP=1 leaves failed clusters up; KUBELAB_FEATURES=GLOB runs
// only the matching feature files.
func TestFeatures(t *testing.T) {
	t.Parallel() // beside the docker drills: see TestMain
	if testing.Short() {
		t.Skip("boots a real cluster per scenario; skipped with -short")
	}
	pattern := "*.feature"
	if p := os.Getenv("KUBELAB_FEATURES"); p != "" {
		pattern = p
	}
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no feature files match %q: %v", pattern, err)
	}
	if _, err := features.Load(files...); err != nil {
		t.Fatalf("features do not load:\n%v", err)
	}
	reports := os.Getenv("KUBELAB_REPORTS")
	if reports == "" {
		reports = t.TempDir()
	}
	if err := os.MkdirAll(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	perFeature := map[string]time.Duration{}
	// Three workers take the feature files one after another from one
	// queue, each scenario on a cluster of its own: a drill mostly waits
	// (for a lease to expire, a node to go NotReady), and a queue keeps
	// every worker busy until the last file, where fixed shares left one
	// waiting for the other's longest drill.
	queue := make(chan string, len(files))
	for _, f := range files {
		queue <- f
	}
	close(queue)
	for w := range min(featureWorkers, len(files)) {
		t.Run(fmt.Sprintf("worker-%d", w+1), func(t *testing.T) {
			t.Parallel()
			lw := &logWriter{t: t}
			defer lw.Flush()
			lib := &features.Library{Runner: runner(t), KeepOnFailure: os.Getenv("KUBELAB_KEEP") == "1", Out: lw}
			lib.OnScenario = func(r features.Report) {
				mu.Lock()
				perFeature[r.Feature] += r.Duration
				mu.Unlock()
				status := "passed"
				if r.Err != nil {
					// The error on the same line as FAILED: CI's summary
					// of failures keeps this line, not the timeline.
					status = "FAILED (" + strings.ReplaceAll(r.Err.Error(), "\n", " ") + ")"
				}
				failIfSkipped(t, r)
				var b strings.Builder
				for _, e := range r.Timeline {
					fmt.Fprintf(&b, "\n  %s", e)
				}
				for _, rc := range r.Recovery {
					fmt.Fprintf(&b, "\n  recovery: %s", rc.Describe)
				}
				t.Logf("%s / %s: %s in %s; timeline:%s", r.Feature, r.Scenario, status, r.Duration.Round(10*time.Millisecond), b.String())
			}
			for f := range queue {
				runFeature(t, lib, lw, f, reports)
			}
		})
	}
	t.Cleanup(func() {
		for _, f := range files {
			if d, ok := perFeature[f]; ok {
				t.Logf("feature %s: %s", f, d.Round(100*time.Millisecond))
			}
		}
		t.Logf("reports in %s", reports)
	})
}

// featureWorkers is how many feature files TestFeatures runs at once:
// two fixed halves took 150 s, three workers on one queue 123 s (the
// two cores still idle 13% of it).
const featureWorkers = 3

// runFeature runs one feature file's scenarios (as subtests of t) and
// writes its reports into dir, named after the file.
func runFeature(t *testing.T, lib *features.Library, lw *logWriter, file, dir string) {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(file), ".feature")
	name := func(kind, ext string) string { return filepath.Join(dir, fmt.Sprintf("%s-%s.%s", kind, base, ext)) }
	format := fmt.Sprintf("progress,pretty:%s,cucumber:%s,junit:%s", name("pretty", "txt"), name("cucumber", "json"), name("junit", "xml"))
	if err := features.Run(t.Context(), lib, features.Options{Paths: []string{file}, Format: format, Output: lw, NoColors: true, TestingT: t}); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	for _, kind := range [][2]string{{"cucumber", "json"}, {"junit", "xml"}} {
		if st, err := os.Stat(name(kind[0], kind[1])); err != nil || st.Size() == 0 {
			t.Errorf("report %s missing or empty: %v", name(kind[0], kind[1]), err)
		}
	}
}

// TestUndefinedStepSuggestsPhrases runs a feature with a misspelt step:
// the run fails (strict mode) and names the three closest phrases, both
// when loading (before any cluster boots) and when running.
func TestUndefinedStepSuggestsPhrases(t *testing.T) {
	const file = "testdata/undefined.feature"
	want := []string{
		`"I kil the etcd leader" matches no phrase of the step library; the closest are:`,
		"When I kill|stop|start|restart|pause|resume the etcd leader|scheduler leader|controller-manager leader",
		"When I kill|stop|pause an etcd follower",
	}
	_, err := features.Load(file)
	if !errors.Is(err, features.ErrUndefinedStep) {
		t.Fatalf("Load(%s) = %v, want an undefined-step error", file, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Load error lacks %q:\n%v", w, err)
		}
	}
	if !strings.Contains(err.Error(), file+":9:") {
		t.Errorf("Load error lacks the step's position %s:9:\n%v", file, err)
	}

	var out bytes.Buffer
	// The scenario must fail before it needs a cluster: a backend that
	// refuses to make one proves it.
	noCluster := &engine.Runner{Backend: func(cluster.Topology) (cluster.Backend, error) {
		t.Error("a cluster was requested for a scenario whose first fault is undefined")
		return nil, errors.New("no cluster in this test")
	}}
	lib := &features.Library{Runner: noCluster, Out: &out}
	err = features.Run(t.Context(), lib, features.Options{Paths: []string{file}, Format: "progress", Output: &out, NoColors: true})
	if !errors.Is(err, features.ErrFailed) {
		t.Fatalf("Run = %v, want ErrFailed; output:\n%s", err, out.String())
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("run output lacks %q:\n%s", w, out.String())
		}
	}
}

// runner is the engine runner for the tests: the embedded backend with
// state in a temporary directory; with KUBELAB_KEEP=1, clusters go to the
// default home and outlive the test, so `kubelab down --name` removes them.
func runner(t *testing.T) *engine.Runner {
	r := enginetest.Runner(t)
	if os.Getenv("KUBELAB_KEEP") == "1" {
		bin, err := testbin.Path()
		if err != nil {
			t.Fatal(err)
		}
		if r.Backend, err = backends.Factory(backends.Embedded, backends.Options{Home: string(embedded.DefaultHome()), Binary: bin}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// logWriter sends whole lines to t.Log.
type logWriter struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.t.Log(strings.TrimRight(line, "\n"))
	}
}

// Flush logs what is left after the last newline.
func (w *logWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.t.Log(w.buf.String())
		w.buf.Reset()
	}
}

// TestDockerFeatures runs the drills that need real nodes (features/docker,
// tagged @docker) on the docker backend.
func TestDockerFeatures(t *testing.T) {
	t.Parallel() // in the pool of TestMain, beside the drills on embedded clusters
	enginetest.NeedDocker(t, "docker drills")
	files, _ := filepath.Glob("docker/*.feature")
	if len(files) == 0 {
		t.Fatal("no drills in docker/")
	}
	lw := &logWriter{t: t}
	lib := &features.Library{Runner: enginetest.RunnerOn(t, "docker"), Out: lw, OnScenario: func(r features.Report) { failIfSkipped(t, r) }}
	err := features.Run(t.Context(), lib, features.Options{Paths: files, Format: "progress", Output: lw, NoColors: true, TestingT: t})
	lw.Flush()
	if err != nil {
		t.Fatal(err)
	}
}

// failIfSkipped fails the test for a scenario its backend refused: every
// drill runs to its end on the backend it is meant for.
func failIfSkipped(t *testing.T, r features.Report) {
	if r.Skipped != "" {
		t.Errorf("%s / %s: skipped: %s", r.Feature, r.Scenario, r.Skipped)
	}
}
