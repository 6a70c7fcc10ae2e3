// Package exercises holds kubelab's graded exercises, one directory each:
// exercise.yaml (the statement, cluster, contract and checks), solution/
// (the reference, full marks) and wrong/ answers that lose documented
// points. The tests grade every sample of every exercise on real embedded
// clusters and check the exact score, the failed checks and the refused
// objects each one is documented to get, so an exercise cannot rot.
package exercises

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/grade"
)

// TestMain lets go test run every test at once: pool decides which run.
func TestMain(m *testing.M) { os.Exit(enginetest.Main(m, 128)) }

// pool grades four exercises' samples at a time, the longest first: a
// grading mostly waits (a wrong sample's failing check waits out its
// timeout), and at two at a time, go test's default on 2 cores, the CPU
// was idle 44% of the time. Every test that grades on real clusters
// (TestExerciseSamples, TestSpreadSamplesScoreTheSameEveryTime,
// TestExercisesLive, TestClassGradingOnADockerCluster) takes its slots
// from it, so none waits for another's last, longest grading.
var pool = enginetest.NewPool(4)

// Estimated durations, for pool's order (measured here under load).
const (
	bootAndApply = 15 * time.Second // a sample's cluster up and its answer applied
	liveLoop     = 45 * time.Second // TestExercisesLive's loop: 13-62 s
)

// exercises loads every shipped exercise.
func exercises(t *testing.T) []*grade.Exercise {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("*", grade.ExerciseFile))
	if len(files) < 6 {
		t.Fatalf("found %d exercises, want at least 6", len(files))
	}
	var out []*grade.Exercise
	for _, f := range files {
		ex, err := grade.LoadExercise(f)
		if err != nil {
			t.Fatalf("%v", err)
		}
		out = append(out, ex)
	}
	return out
}

func TestExercisesLoad(t *testing.T) {
	for _, ex := range exercises(t) {
		if err := ex.CheckLive(); err != nil {
			t.Errorf("%s: every shipped exercise must also run live (kubelab exercise start): %v", ex.File(), err)
		}
		if filepath.Base(ex.Dir()) != ex.Metadata.Name {
			t.Errorf("%s: directory %s, want it named after the exercise", ex.File(), ex.Dir())
		}
		var hasSolution, hasWrong bool
		for _, s := range ex.Spec.Samples {
			hasSolution = hasSolution || s.Path == "solution" && s.Score == ex.MaxScore()
			hasWrong = hasWrong || strings.HasPrefix(s.Path, "wrong/") && s.Score < ex.MaxScore()
		}
		switch {
		case len(ex.Spec.Solution) > 0:
			// Repaired by operations (kubelab fault start ...): the live
			// test runs them on the setup state.
			if ex.Spec.SetupScore == nil {
				t.Errorf("%s: a solution of operations repairs a setup: want setupScore", ex.File())
			}
		case !hasSolution || !hasWrong:
			t.Errorf("%s: want a solution sample with full marks and at least one wrong/ sample with fewer", ex.File())
		}
	}
}

// TestExerciseSamples grades every sample of every exercise and checks it
// gets exactly its documented score, failed checks and refusals.
func TestExerciseSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("grades on real clusters; skipped with -short")
	}
	t.Parallel() // beside the other tests that take pool's slots
	for _, ex := range exercises(t) {
		for _, s := range ex.Spec.Samples {
			t.Run(ex.Metadata.Name+"/"+s.Path, func(t *testing.T) {
				// A wrong sample waits out the timeout of every check it fails.
				pool.Run(t, bootAndApply+failingWait(ex, s))
				g := gradeDir(t, ex, filepath.Join(ex.Dir(), s.Path), "")
				if g.Status != grade.StatusGraded || g.Score != s.Score || !slices.Equal(g.Failed(), s.Fails) || !slices.Equal(g.RefusedRules(), s.Refused) {
					t.Errorf("%s: got %s %d/%d, failed %q, refused %q; want %d/%d, failed %q, refused %q%s",
						s.Path, g.Status, g.Score, g.Max, g.Failed(), g.RefusedRules(), s.Score, g.Max, s.Fails, s.Refused, report(g))
					return
				}
				t.Logf("%s: %d/%d in %s (cluster up in %s)", s.Path, g.Score, g.Max, g.Duration.Round(100e6), g.BootDuration.Round(100e6))
			})
		}
	}
}

// failingWait is how long grading s waits out its failures: the longest
// wait of each check it is documented to fail.
func failingWait(ex *grade.Exercise, s v1alpha1.Sample) time.Duration {
	var total time.Duration
	for _, c := range ex.Spec.Checks {
		if !slices.Contains(s.Fails, c.Name) {
			continue
		}
		var longest time.Duration
		for _, op := range c.Try {
			if op.Wait != nil {
				longest = max(longest, op.Wait.Timeout.Duration)
			}
		}
		total += longest
	}
	return total
}

// gradeDir grades one submission directory on a fresh embedded cluster.
func gradeDir(t *testing.T, ex *grade.Exercise, dir, learner string) *grade.Grade {
	t.Helper()
	sub, err := grade.ReadSubmission(dir, &ex.Spec.Submission)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grade.Run(context.WithoutCancel(t.Context()), enginetest.Runner(t), ex, sub, learner)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// report is a grade's summary and timeline, for failure messages.
func report(g *grade.Grade) string {
	var b strings.Builder
	grade.WriteSummary(&b, nil, g)
	b.WriteString("\ntimeline:\n")
	for _, e := range g.Timeline {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

var update = flag.Bool("update", false, "rewrite the exercise table of README.md")

// TestExercisesREADME keeps README.md's table of exercises and sample
// scores in step with the exercise files.
func TestExercisesREADME(t *testing.T) {
	const begin, end = "<!-- exercises:begin", "<!-- exercises:end -->"
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q ... %q markers", begin, end)
	}
	i += strings.Index(readme[i:], "\n") + 1
	var b strings.Builder
	b.WriteString("\n| Exercise | Difficulty | Topics | Samples (score out of 10) |\n|---|---|---|---|\n")
	for _, ex := range exercises(t) {
		var samples []string
		if ss := ex.Spec.SetupScore; ss != nil {
			samples = append(samples, fmt.Sprintf("setup %d", ss.Score))
		}
		for _, s := range ex.Spec.Samples {
			samples = append(samples, fmt.Sprintf("`%s` %d", s.Path, s.Score))
		}
		for _, m := range ex.Spec.Mistakes {
			samples = append(samples, fmt.Sprintf("mistake `%s` %d", m.Name, m.Score))
		}
		if ex.MaxScore() != 10 {
			t.Errorf("%s: %d points; the table assumes 10", ex.File(), ex.MaxScore())
		}
		fmt.Fprintf(&b, "| [%s](%s/): %s | %s | %s | %s |\n", ex.Metadata.Name, ex.Metadata.Name, ex.Metadata.Title,
			ex.Metadata.Difficulty, strings.Join(ex.Metadata.Topics, ", "), strings.Join(samples, ", "))
	}
	b.WriteString("\n")
	want := readme[:i] + b.String() + readme[j:]
	if *update {
		if err := os.WriteFile("README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != readme {
		t.Errorf("README.md's exercise table is stale; rewrite it with:\n\tgo test ./exercises -run README -update")
	}
}

// TestSpreadSamplesScoreTheSameEveryTime grades each spread-replicas
// sample KUBELAB_SAMPLE_RUNS more times, each on a cluster of its own:
// its documented score must not depend on where the scheduler happens
// to put the replicas. It is for hunting a placement that scores
// otherwise, and runs only when that variable is set: the suite's
// TestExerciseSamples grades every sample once per run, and grading the
// spread samples a second time cost every run ~25 s.
func TestSpreadSamplesScoreTheSameEveryTime(t *testing.T) {
	if testing.Short() {
		t.Skip("grades on real clusters; skipped with -short")
	}
	runs := 0
	if n, err := fmt.Sscan(os.Getenv("KUBELAB_SAMPLE_RUNS"), &runs); n != 1 || err != nil || runs < 1 {
		t.Skip("set KUBELAB_SAMPLE_RUNS=N to grade each spread-replicas sample N more times")
	}
	t.Parallel()
	ex, err := grade.LoadExercise(filepath.Join("spread-replicas", grade.ExerciseFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ex.Spec.Samples {
		if only := os.Getenv("KUBELAB_SAMPLE"); only != "" && only != s.Path {
			continue
		}
		t.Run(s.Path, func(t *testing.T) {
			pool.Run(t, time.Duration(runs)*(bootAndApply+failingWait(ex, s)))
			scores := map[int]int{}
			for i := 0; i < runs; i++ {
				g := gradeDir(t, ex, filepath.Join(ex.Dir(), s.Path), "")
				scores[g.Score]++
				if g.Status != grade.StatusGraded || g.Score != s.Score || !slices.Equal(g.Failed(), s.Fails) {
					t.Errorf("grading %d/%d: %s %d/%d, failed %q; want %d, failed %q%s", i+1, runs, g.Status, g.Score, g.Max, g.Failed(), s.Score, s.Fails, report(g))
				}
			}
			t.Logf("%s: scores over %d gradings: %v", s.Path, runs, scores)
		})
	}
}

// TestExercisesLive runs the live loop of every exercise, on one cluster
// each, as a learner would: after setup, kubelab check (before any work)
// leaves the nodes, their cordons and taints exactly as they were (a
// check that changes the cluster is destructive and does not run then);
// an exercise that documents its setup score scores exactly that with
// every check, and deleting any protected object is refused with the
// policy's message; after the reference solution, check --final scores
// full marks (the solution is also graded on a fresh cluster by
// TestExerciseSamples).
func TestExercisesLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs on real clusters; skipped with -short")
	}
	t.Parallel()
	for _, ex := range exercises(t) {
		ss := ex.Spec.SetupScore
		t.Run(ex.Metadata.Name, func(t *testing.T) {
			pool.Run(t, liveLoop)
			ctx := context.WithoutCancel(t.Context())
			s := setUp(t, ex, ex.Metadata.Name+"-live")
			before := nodeState(t, s)
			g := grade.CheckExercise(ctx, s, ex, grade.CheckOptions{Patience: 5 * time.Second})
			if after := nodeState(t, s); !slices.Equal(before, after) {
				t.Errorf("kubelab check changed the nodes:\nbefore %q\nafter  %q%s", before, after, report(g))
			}
			o := grade.CheckOptions{Final: true, Patience: 5 * time.Second}
			if ss != nil {
				g := grade.CheckExercise(ctx, s, ex, o)
				if g.Score != ss.Score || !slices.Equal(g.Failed(), ss.Fails) {
					t.Errorf("setup state: %d/%d, failed %q; want %d, failed %q%s", g.Score, g.Max, g.Failed(), ss.Score, ss.Fails, report(g))
				}
			}
			for _, p := range ex.Spec.Protect {
				args := []string{"delete", p.Kind, p.Name}
				if p.Namespace != "" {
					args = append(args, "-n", p.Namespace)
				}
				src, _ := json.Marshal(map[string]any{"kubectl": map[string]any{"args": args, "expectError": true, "expectOutput": regexp.QuoteMeta(p.DefaultMessage())}})
				op, err := s.Prepare(string(src), ex.Dir())
				if err != nil {
					t.Fatal(err)
				}
				if r := s.Exec(ctx, op); r.Status != engine.Passed {
					t.Errorf("kubectl %s: want the policy's denial: %s\n%s", strings.Join(args, " "), r.Error, r.Output)
				}
			}
			if _, err := grade.Solve(ctx, s, ex); err != nil {
				t.Fatalf("the reference solution: %v", err)
			}
			// The controllers need a moment after the fix: allow the
			// checks their own timeouts.
			o.Patience = 0
			if g := grade.CheckExercise(ctx, s, ex, o); g.Score != g.Max {
				t.Errorf("after the solution: %d/%d, failed %q%s", g.Score, g.Max, g.Failed(), report(g))
			}
		})
	}
}

// TestExerciseMistakes makes every documented mistake (spec.mistakes) on
// the setup state of a cluster of its own, as kubelab solve --mistake
// does, and checks that kubelab check --final gives it exactly its
// documented score and failed checks.
func TestExerciseMistakes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs on real clusters; skipped with -short")
	}
	t.Parallel()
	for _, ex := range exercises(t) {
		for i := range ex.Spec.Mistakes {
			m := &ex.Spec.Mistakes[i]
			t.Run(ex.Metadata.Name+"/"+m.Name, func(t *testing.T) {
				pool.Run(t, bootAndApply+failingWait(ex, v1alpha1.Sample{Fails: m.Fails}))
				ctx := context.WithoutCancel(t.Context())
				s := setUp(t, ex, ex.Metadata.Name+"-"+m.Name)
				if _, err := grade.MakeMistake(ctx, s, ex, m); err != nil {
					t.Fatal(err)
				}
				g := grade.CheckExercise(ctx, s, ex, grade.CheckOptions{Final: true})
				if g.Score != m.Score || !slices.Equal(g.Failed(), m.Fails) {
					t.Errorf("mistake %s: %d/%d, failed %q; want %d, failed %q%s", m.Name, g.Score, g.Max, g.Failed(), m.Score, m.Fails, report(g))
				}
			})
		}
	}
}

// setUp boots a cluster called name for ex, runs its setup as exercise
// start does, and takes the cluster down when the test ends; an exercise
// that needs what the embedded backend cannot give is skipped.
func setUp(t *testing.T, ex *grade.Exercise, name string) *engine.Session {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	s, err := enginetest.Runner(t).StartFor(ctx, name, ex.Topology(), ex.Needs())
	if errors.Is(err, cluster.ErrMissingCapability) {
		t.Skipf("%s needs what the embedded backend cannot give: %v", ex.Metadata.Name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := s.Close(ctx, false); err != nil {
			t.Error(err)
		}
	})
	if _, err := grade.SetupExercise(ctx, s, ex); err != nil {
		t.Fatal(err)
	}
	return s
}

// nodeState is every node with its cordon and taints, for comparisons.
func nodeState(t *testing.T, s *engine.Session) []string {
	t.Helper()
	cs, err := s.Cluster().Client()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes.Items {
		line := fmt.Sprintf("%s unschedulable=%t", n.Name, n.Spec.Unschedulable)
		for _, tt := range n.Spec.Taints {
			line += fmt.Sprintf(" %s=%s:%s", tt.Key, tt.Value, tt.Effect)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
