package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/internal/safetext"
)

// The live exercise loop: `kubelab exercise start` boots an exercise's
// cluster and leaves it up, `kubelab check` grades it as it is, `kubelab
// solve` applies the reference solution, `kubelab exercise stop` removes
// it.

// ErrNoExercise is returned by check and solve on a cluster that runs no
// exercise.
var ErrNoExercise = errors.New("the cluster runs no exercise")

// exerciseStateFile names, in a cluster's state directory, the record of
// the exercise the cluster runs.
const exerciseStateFile = "exercise.json"

// liveExercise is what `exercise start` records in the cluster's state
// directory: check and solve read it.
type liveExercise struct {
	// File is the exercise file, absolute.
	File string `json:"file"`
	// Name is the exercise's name.
	Name string `json:"name"`
	// Started is when the exercise was set up.
	Started time.Time `json:"started"`
}

// stateDir is the state directory of a cluster: where its kubeconfig and
// PKI are, and where the exercise it runs is recorded.
func stateDir(g *globals, b cluster.Backend) string {
	if d, ok := b.(interface{ Dir() string }); ok {
		return d.Dir()
	}
	return g.dockerDir(b.Topology().Name)
}

func writeLiveExercise(g *globals, b cluster.Backend, ex *grade.Exercise) error {
	file, err := filepath.Abs(ex.File())
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(liveExercise{File: file, Name: ex.Metadata.Name, Started: time.Now()}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stateDir(g, b), exerciseStateFile), append(data, '\n'), 0o644)
}

// openExercise attaches to the named cluster and loads the exercise it
// runs.
func openExercise(ctx context.Context, g *globals) (cluster.Backend, *grade.Exercise, error) {
	b, err := openBackend(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(filepath.Join(stateDir(g, b), exerciseStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, invalidf("cluster %q: %w (start one with: kubelab exercise start EXERCISE --name %s)", g.name, ErrNoExercise, g.name)
	}
	if err != nil {
		return nil, nil, err
	}
	var le liveExercise
	if err := json.Unmarshal(data, &le); err != nil {
		return nil, nil, fmt.Errorf("cluster %q: read %s: %w", g.name, exerciseStateFile, err)
	}
	ex, err := g.loadExercise(le.File)
	if err != nil {
		return nil, nil, invalid(fmt.Errorf("cluster %q runs exercise %s: %w", g.name, le.Name, err))
	}
	return b, ex, nil
}

func liveRunner(g *globals, progress bool) (*engine.Runner, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r := &engine.Runner{Binary: bin, Observe: g.hooks.observe, Words: g.words}
	if progress {
		r.Progress = engine.ConsoleProgress(g.streams.Err)
	}
	return r, nil
}

func newExerciseStartCommand(g *globals) *cobra.Command {
	var backend string
	var withUI bool
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "start EXERCISE",
		Short: "Boot an exercise's cluster, run its setup and leave it up: work on it with kubectl, then kubelab check",
		Long: `Start boots the exercise's cluster (it stays up, like kubelab up), runs the
exercise's setup (a "fix" exercise leaves something broken), protects the
objects the exercise says must be repaired in place, records which
exercise the cluster runs, prints the statement and the KUBECONFIG line,
and returns.

With --backend kubeconfig --kubeconfig FILE the exercise runs on a
cluster kubelab did not create, in the namespace its statement names:
kubelab takes over no object it did not make there, and exercise stop
removes exactly what it made. An exercise that needs what such a cluster
cannot give (a component to kill, etcd's Raft state) is refused first.

Then: kubectl (or kubelab kubectl) to work, kubelab check to see the
score as often as you like, kubelab check --watch to see checks turn
green, kubelab check --final for the final score, kubelab exercise stop
to remove the cluster.`,
		Example: `  eval "$(kubelab exercise start exercises/fix-service-selector)"
  kubelab check --watch
  kubelab exercise start exercises/fix-pending-pods --backend kubeconfig --kubeconfig ~/.kube/config --name mine`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := g.loadExercise(g.coursePath(args[0]))
			if err != nil {
				return invalid(err)
			}
			if err := ex.CheckLive(); err != nil {
				return invalid(err)
			}
			if err := backends.Check(backend, g.backendOpts("", false, &kf)); err != nil {
				return invalid(err)
			}
			if err := startExercise(cmd.Context(), g, backend, &kf, ex); err != nil || !withUI {
				return err
			}
			// --ui: the exercise in the browser, until Ctrl-C removes it.
			g.interruptEndsNormally = true
			b, ex, err := openExercise(cmd.Context(), g)
			if err != nil {
				return err
			}
			return serveUI(cmd.Context(), g, &uiFlags{patience: 2 * time.Second, backend: backend, kube: kf}, b, ex, nil, true)
		},
	}
	cmd.Flags().BoolVar(&withUI, "ui", false, "then serve the exercise in the browser (kubelab ui): statement, live checks, terminals, the machinery; Ctrl-C stops it and removes the cluster")
	cmd.Flags().StringVar(&backend, "backend", backendEmbedded, "where the cluster runs: embedded, docker, or kubeconfig (an existing cluster: --kubeconfig)")
	kf.add(cmd.Flags())
	return cmd
}

func startExercise(ctx context.Context, g *globals, backend string, kf *kubeFlags, ex *grade.Exercise) (err error) {
	t := ex.Topology()
	t.Name = g.name
	if err := nameFree(ctx, g); err != nil {
		return err
	}
	var b cluster.Backend
	if backend == backendKubeconfig {
		// A cluster kubelab did not create: the exercise works in the
		// namespace its statement names, taking over nothing there.
		b, err = newBackend(g, backendKubeconfig, t, false, kf)
	} else {
		b, err = newBackend(g, backend, t, false, nil)
	}
	if err != nil {
		return invalid(err)
	}
	if err := ex.CheckBackend(b); err != nil {
		return invalid(err) // before anything boots or changes
	}
	if err := boot(ctx, g, b); err != nil {
		if backend == backendKubeconfig {
			_ = b.Down(context.WithoutCancel(ctx)) // what Up made, nothing else
		}
		return err
	}
	defer func() {
		if err != nil { // a half-prepared exercise is no use to anyone
			_ = b.Down(context.WithoutCancel(ctx))
			fmt.Fprintf(g.streams.Err, "removed cluster %q\n", g.name)
		}
	}()
	r, err := liveRunner(g, true)
	if err != nil {
		return err
	}
	r.Progress = quietWhenInterrupted(ctx, g, r.Progress)
	s, err := r.Attach(ctx, ex.Metadata.Name, b)
	if err != nil {
		return cannotRun(err)
	}
	defer s.Close(ctx, true)
	if _, err := grade.SetupExercise(ctx, s, ex); err != nil {
		return cannotRun(fmt.Errorf("exercise %s: %w", ex.Metadata.Name, err))
	}
	if err := writeLiveExercise(g, b, ex); err != nil {
		return err
	}
	w := g.streams.Err
	fmt.Fprintln(w)
	if err := grade.WriteLiveStatement(w, g.words, ex); err != nil {
		return err
	}
	g.words.Fprintf(w, "\nExercise %s is running on cluster %q. Check your work with: kubelab check --name %s (--watch, --final); give up with: kubelab solve --name %s; remove it with: kubelab exercise stop --name %s\n",
		ex.Metadata.Name, g.name, g.name, g.name, g.name)
	return nil
}

func newExerciseStopCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Remove an exercise's cluster (--name): processes, ports, files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, _, err := openExercise(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := b.Down(cmd.Context()); err != nil {
				return fmt.Errorf("exercise stop %s: %w", g.name, err)
			}
			fmt.Fprintf(g.streams.Err, "removed cluster %q\n", g.name)
			return nil
		},
	}
}

type checkFlags struct {
	watch    bool
	final    bool
	json     string
	patience time.Duration
}

func newCheckCommand(g *globals) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Grade the live cluster of an exercise as it is (kubelab exercise start): points, hints, expected vs observed",
		Long: `Check grades the cluster an exercise runs on (--name) with the exercise's
checks, as it is: nothing is applied or restarted, so run it as often as
you like. The report is the one of kubelab grade. Each check gets at most
--patience to pass.

Checks that hurt the cluster (destructive: they take a node down, drain
it...) are skipped and say so; --final runs them too, after the others,
and reports the final score.

--watch re-evaluates whenever the cluster changes (the watched pods,
nodes, endpoints, leases and events; every 5s for the rest) and redraws
the checklist, until Ctrl-C. When its output is not a terminal it prints
every evaluation and returns once every check it runs passes.

Exit code: 0 when the score reaches the exercise's passing score, 1
below it.`,
		Example: `  kubelab check
  kubelab check --watch
  kubelab check --final --json final.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.watch && f.final {
				return invalid(errors.New("--watch and --final do not go together: --final hurts the cluster once, at the end"))
			}
			b, ex, err := openExercise(cmd.Context(), g)
			if err != nil {
				return err
			}
			r, err := liveRunner(g, g.verbose)
			if err != nil {
				return err
			}
			s, err := r.Attach(cmd.Context(), ex.Metadata.Name, b)
			if err != nil {
				return cannotRun(err)
			}
			defer s.Close(cmd.Context(), true)
			o := grade.CheckOptions{Final: f.final, Patience: f.patience}
			var gr *grade.Grade
			if f.watch {
				// Ctrl-C is how a watch ends: a normal stop, whose verdict
				// is the last evaluation's.
				g.interruptEndsNormally = true
				gr = watchChecks(cmd.Context(), g, s, ex, o)
				if cmd.Context().Err() != nil {
					fmt.Fprintf(g.streams.Err, "\nStopped watching: %d/%d at the last evaluation.\n", gr.Score, gr.Max)
					return checkVerdict(ex, gr, f.final)
				}
			} else {
				gr = grade.CheckExercise(cmd.Context(), s, ex, o)
				grade.WriteSummary(g.streams.Out, g.words, gr)
			}
			if cmd.Context().Err() != nil {
				return cmd.Context().Err()
			}
			if err := writeFile(f.json, func(w io.Writer) error { return grade.WriteJSON(w, gr) }); err != nil {
				return err
			}
			return checkVerdict(ex, gr, f.final)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.watch, "watch", false, "re-evaluate whenever the cluster changes, until Ctrl-C")
	fl.BoolVar(&f.final, "final", false, "run the destructive checks too (last), and report the final score")
	fl.StringVar(&f.json, "json", "", "write the JSON report of the (last) evaluation to this file")
	fl.DurationVar(&f.patience, "patience", 5*time.Second, "time each non-destructive check gets to pass")
	return cmd
}

// checkVerdict is the error (exit code) of a live check's grade.
func checkVerdict(ex *grade.Exercise, gr *grade.Grade, final bool) error {
	skipped := 0
	for _, c := range gr.Checks {
		if c.Error == grade.SkippedDestructive {
			skipped += c.Points
		}
	}
	note := ""
	if skipped > 0 && !final {
		note = fmt.Sprintf(" (%d points in destructive checks not run: kubelab check --final)", skipped)
	}
	switch {
	case gr.Status == grade.StatusError:
		return cannotRun(fmt.Errorf("%w: %s", ErrNotGraded, gr.Error))
	case !gr.Passed:
		return withCode(ExitFailed, fmt.Errorf("%s: score %d/%d is %w %d%s", ex.Metadata.Name, gr.Score, gr.Max, ErrNotPassed, gr.PassingScore, note))
	}
	return nil
}

// watchDebounce gathers a burst of changes (a rollout touches many
// objects) into one evaluation.
const watchDebounce = 300 * time.Millisecond

// watchResync re-evaluates a watched cluster that showed no change: for
// what the view does not watch.
const watchResync = 5 * time.Second

// watchChecks evaluates the checks, then again after every change of the
// cluster: on a terminal it redraws the checklist in place until ctx
// ends; otherwise it prints each evaluation and returns once every check
// it runs passes. It returns the last grade.
func watchChecks(ctx context.Context, g *globals, s *engine.Session, ex *grade.Exercise, o grade.CheckOptions) *grade.Grade {
	tty := isTerminal(g.streams.Out)
	for n := 1; ; n++ {
		gr := grade.CheckExercise(ctx, s, ex, o)
		if ctx.Err() != nil {
			return gr
		}
		var b strings.Builder
		if tty {
			_ = safetext.Control(g.streams.Out, "\x1b[H\x1b[2J") // home, clear: redraw in place
		}
		fmt.Fprintf(&b, "[%s] evaluation %d: %d/%d", time.Now().Format("15:04:05"), n, gr.Score, gr.Max)
		grade.WriteSummary(&b, g.words, gr)
		done := allRunPassed(gr)
		switch {
		case done:
			n := g.nameFlag()
			fmt.Fprintf(&b, "\nEvery check that runs live passes. Final score: kubelab check --final%s; then kubelab exercise stop%s\n", n, n)
		case tty:
			b.WriteString("\nWatching the cluster; Ctrl-C to stop.\n")
		}
		_, _ = io.WriteString(g.streams.Out, b.String())
		if done {
			return gr
		}
		if !awaitChange(ctx, s) {
			return gr
		}
	}
}

// awaitChange drains what an evaluation itself saw change, waits for the
// next change of the cluster and lets its burst settle; false when ctx
// ends first. The view watches pods, nodes, endpoints, leases and events,
// not every kind an expression may read (a Role, a Service's port, the
// Raft table): after watchResync without a change it returns anyway.
func awaitChange(ctx context.Context, s *engine.Session) bool {
	drain(s.Changed())
	select {
	case <-ctx.Done():
		return false
	case <-s.Changed():
	case <-time.After(watchResync):
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(watchDebounce):
	}
	drain(s.Changed())
	return true
}

// allRunPassed says whether every check that ran passed (skipped
// destructive checks do not count).
func allRunPassed(gr *grade.Grade) bool {
	for _, c := range gr.Checks {
		if c.Status != engine.Passed && c.Error != grade.SkippedDestructive {
			return false
		}
	}
	return gr.Status == grade.StatusGraded
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func newSolveCommand(g *globals) *cobra.Command {
	var mistake string
	cmd := &cobra.Command{
		Use:   "solve",
		Short: "Apply the reference solution of the exercise a live cluster runs (--name): for teachers, and learners who give up",
		Long: `Apply the reference solution of the exercise a live cluster runs (--name):
for teachers, and learners who give up.

--mistake NAME makes instead one of the wrong repairs the exercise
documents (its spec.mistakes), as a learner would have: kubelab check then
shows the points it loses and why. For teachers showing a class the
shortcut that looks like a fix.`,
		Example: `  kubelab solve --name fix
  kubelab solve --name fix --mistake finalize-namespace`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, ex, err := openExercise(cmd.Context(), g)
			if err != nil {
				return err
			}
			var m *grade.Mistake
			if mistake != "" {
				if m = ex.Mistake(mistake); m == nil {
					return invalid(unknownMistake(ex, mistake))
				}
			}
			r, err := liveRunner(g, g.verbose)
			if err != nil {
				return err
			}
			s, err := r.Attach(cmd.Context(), ex.Metadata.Name, b)
			if err != nil {
				return cannotRun(err)
			}
			defer s.Close(cmd.Context(), true)
			var gr grade.Solved
			if m != nil {
				gr.Ops, err = grade.MakeMistake(cmd.Context(), s, ex, m)
			} else {
				var sol *grade.Solved
				sol, err = grade.Solve(cmd.Context(), s, ex)
				gr = *sol
			}
			for _, o := range gr.Objects {
				if o.Applied {
					fmt.Fprintf(g.streams.Out, "applied %s (%s)\n", o.Object, o.File)
				}
			}
			for _, o := range gr.Ops {
				fmt.Fprintf(g.streams.Out, "ran %s (%s)\n", o.Summary, o.Status)
			}
			if err != nil {
				return cannotRun(err)
			}
			if m != nil {
				fmt.Fprintf(g.streams.Err, "made the mistake %s: %s\nit scores %d of %d: kubelab check --final --name %s shows why\n",
					m.Name, strings.Join(strings.Fields(m.Description), " "), m.Score, ex.MaxScore(), g.name)
				return nil
			}
			fmt.Fprintf(g.streams.Err, "now: kubelab check --name %s\n", g.name)
			return nil
		},
	}
	cmd.Flags().StringVar(&mistake, "mistake", "", "make the exercise's documented mistake NAME instead of solving it")
	return cmd
}

// unknownMistake says that ex documents no mistake called name, and which
// it does.
func unknownMistake(ex *grade.Exercise, name string) error {
	var names []string
	for _, m := range ex.Spec.Mistakes {
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("exercise %s documents no mistake (spec.mistakes); --mistake %s cannot be made", ex.Metadata.Name, name)
	}
	return fmt.Errorf("exercise %s documents no mistake %q; it documents: %s", ex.Metadata.Name, name, strings.Join(names, ", "))
}
