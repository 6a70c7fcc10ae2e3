// Package enginetest runs lab files from `go test` on the embedded backend:
//
//	func TestMyLab(t *testing.T) { enginetest.Run(t, "labs/my-lab.yaml") }
//
// Progress goes to t.Log; a failed lab fails the test with its steps,
// expected and observed values, and timeline. The kubelab binary that
// carries the components is $KUBELAB_BIN, or built from this module.
package enginetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/testbin"
	"kubelab.dev/kubelab/load"
)

// NeedDocker skips t, naming what is skipped, under -short (what needs
// Docker boots clusters) or when no Docker engine answers within 5 s.
func NeedDocker(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s boots docker clusters; skipped with -short", what)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := docker.Available(ctx); err != nil {
		t.Skipf("no Docker engine answers (%v): %s skipped", err, what)
	}
}

// HaveDocker reports whether a Docker engine answers (and the run is not
// -short): a test that runs on an embedded cluster what its docker twin
// runs on a docker one can leave it to the twin.
func HaveDocker() bool {
	if testing.Short() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return docker.Available(ctx) == nil
}

// Runner returns an engine.Runner for tests: embedded backend with state
// under t.TempDir(), clusters tied to the test process, progress to t.Log.
func Runner(t testing.TB) *engine.Runner { return RunnerOn(t, "embedded") }

// RunnerOn is Runner on the given backend: "embedded" or "docker".
func RunnerOn(t testing.TB, backend string) *engine.Runner {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	newBackend, err := backends.Factory(backend, backends.Options{Home: t.TempDir(), Binary: bin, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Runner{
		Binary:  bin,
		Backend: newBackend,
		Log:     slog.New(failOnWarn{t}),
		Progress: func(p engine.Progress) {
			msg := p.Message
			if p.Err != nil {
				msg += ": " + p.Err.Error()
			}
			t.Logf("%7.2fs %s | %s | %s", p.Elapsed.Seconds(), p.Lab, p.Step, msg)
		},
	}
}

// Run loads and runs one lab file on the embedded backend and fails t
// unless it passes. It returns the result for further checks.
func Run(t testing.TB, path string) *engine.Result { return RunOn(t, path, "embedded") }

// RunOn is Run on the given backend.
func RunOn(t testing.TB, path, backend string) *engine.Result {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a lab on a real cluster; skipped with -short")
	}
	lab, err := load.ReadLab(path)
	if err != nil {
		t.Fatalf("load %s:\n%v", path, err)
	}
	ctx := context.Background()
	if tt, ok := t.(interface{ Context() context.Context }); ok {
		ctx = tt.Context()
	}
	res, err := RunnerOn(t, backend).Run(ctx, lab)
	if errors.Is(err, cluster.ErrMissingCapability) {
		t.Skipf("skip %s: %v", path, err)
	}
	if err != nil {
		t.Fatalf("run %s: %v", path, err)
	}
	if !res.Passed() {
		var b strings.Builder
		engine.WriteSummary(&b, nil, []*engine.Result{res})
		fmt.Fprintf(&b, "\ntimeline:\n")
		engine.WriteTimeline(&b, res)
		t.Fatalf("lab %s %s:\n%s", res.Lab, res.Status, b.String())
	}
	return res
}

// Backend makes an ephemeral cluster of the given backend ("embedded" or
// "docker") for t, with its state under t.TempDir(): for tests that boot
// a cluster themselves (e.g. to stand for a cluster kubelab did not
// create). The caller brings it up and down.
func Backend(t testing.TB, backend string, topo cluster.Topology) cluster.Backend {
	t.Helper()
	bin, err := testbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	b, err := backends.Make(backend, topo, backends.Options{Home: t.TempDir(), Binary: bin, Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failOnWarn fails the test on the runner's warnings: the only one is a
// cluster that could not be torn down, which would otherwise pass quietly
// and leave containers, networks or processes behind.
type failOnWarn struct{ t testing.TB }

func (h failOnWarn) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h failOnWarn) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s", a); return true })
	h.t.Errorf("runner: %s:%s", r.Message, b.String())
	return nil
}

func (h failOnWarn) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h failOnWarn) WithGroup(string) slog.Handler      { return h }

// Main runs a package's tests with go test's -parallel set to parallel
// unless the command line sets it: for packages whose parallel tests
// boot clusters that mostly wait (leases to expire, checks to time
// out), where go test's default (one per core) leaves the CPU idle.
// Like testbin.Main, it first takes the machine's cluster turn unless
// -short skips the tests that boot clusters.
// Call it from TestMain: os.Exit(enginetest.Main(m, 4)).
func Main(m *testing.M, parallel int) int {
	setParallel(parallel)
	return testbin.Main(m)
}

// setParallel sets go test's -parallel unless the command line does.
func setParallel(parallel int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(parallel)); err != nil {
			panic(err) // the testing package defines the flag
		}
	}
}
