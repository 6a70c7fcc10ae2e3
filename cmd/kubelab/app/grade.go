package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/internal/i18n"
)

// ErrNotPassed is returned by `kubelab grade` when a submission scored
// below the exercise's passing score.
var ErrNotPassed = errors.New("below the passing score")

// ErrNotGraded is returned by `kubelab grade` when a submission could not
// be graded (the cluster did not come up, the exercise's setup failed).
var ErrNotGraded = errors.New("could not grade")

type gradeFlags struct {
	submission  string
	submissions string
	learner     string
	parallel    int
	backend     string
	junit       string
	json        string
	markdown    string
	html        string
	out         string
	keep        bool
	timeline    bool
	kube        kubeFlags
	on          string
	onContext   string
	image       string
}

func newGradeCommand(g *globals) *cobra.Command {
	f := &gradeFlags{}
	cmd := &cobra.Command{
		Use:   "grade EXERCISE (--submission DIR | --submissions DIR)",
		Short: "Grade submissions of an exercise on real clusters: score, and a reason for every lost point",
		Long: `Grade boots the exercise's cluster, runs its setup, applies the submission's
manifests (refusing what breaks the exercise's contract or a safety rule),
runs every check and adds up the points. EXERCISE is an exercise directory
or its exercise.yaml.

What the contract refuses is printed before the cluster boots; when nothing
is left to apply, no cluster boots and the score is 0 (exit code 2).

With --submission, it grades one directory and exits 1 when the score is
below the passing score. With --submissions, it grades every
sub-directory (one per learner) on isolated clusters, --parallel at a time,
and writes a scoreboard (CSV and JSON) and one report per learner to --out;
it exits non-zero (3) only when a submission could not be graded.

With --on CLASS.kubeconfig, --submissions are graded in pods of that
Kubernetes cluster instead of on this machine: one Indexed Job, --parallel
pods at a time, each grading one submission on an embedded cluster inside
the pod (unprivileged; no Docker). The pods run the grader image (--image,
default the one 'kubelab images build' makes); the scoreboard and reports
are the same as local grading's, and the Job's namespace is removed after.
A pod that fails or is evicted is retried once, then its submission is
reported as "could not grade", never as a score.

The Markdown summary is also appended to $GITHUB_STEP_SUMMARY when set.`,
		Example: `  kubelab grade exercises/spread-replicas --submission my-answer/
  kubelab grade exercises/pdb-drain --submission . --junit grade.xml --json grade.json --markdown grade.md --html grade.html
  kubelab grade exercises/rbac-least-privilege --submissions class-2026/ --parallel 2 --out grades/
  kubelab grade exercises/rbac-least-privilege --submissions class-2026/ --on class.kubeconfig --parallel 8 --image registry.example/kubelab-grader:v1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && f.submission == "" && f.submissions == "" {
				// kubelab grade EXERCISE ANSWER: the likeliest first try.
				return fmt.Errorf("grade takes one EXERCISE; pass the work to grade with a flag: "+
					"kubelab grade %s --submission %s (one learner's manifests), or --submissions %[2]s (a directory per learner)", args[0], args[1])
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if (f.submission == "") == (f.submissions == "") {
				return invalid(errors.New("want exactly one of --submission DIR and --submissions DIR"))
			}
			ex, err := g.loadExercise(g.coursePath(args[0]))
			if err != nil {
				return invalid(err)
			}
			if f.on != "" {
				return gradeOnCluster(cmd, g, f, ex)
			}
			if f.onContext != "" || f.image != "" {
				return invalid(errors.New("--on-context and --image are for grading on a class cluster: add --on FILE.kubeconfig"))
			}
			r, err := gradeRunner(g, f)
			if err != nil {
				return invalid(err)
			}
			if err := checkExerciseBackend(r, ex); err != nil {
				return invalid(err)
			}
			r.Progress = quietWhenInterrupted(cmd.Context(), g, r.Progress)
			if f.submission != "" {
				return gradeOne(cmd, g, f, r, ex)
			}
			return gradeBatch(cmd, g, f, r, ex)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.submission, "submission", "", "grade this directory of manifests")
	fl.StringVar(&f.submissions, "submissions", "", "grade every sub-directory of this directory (one per learner)")
	fl.StringVar(&f.learner, "learner", "", "name the learner in reports (--submission; default: none)")
	fl.IntVar(&f.parallel, "parallel", 2, "submissions graded at a time (--submissions)")
	fl.StringVar(&f.backend, "backend", "embedded", "where the clusters run: embedded, or kubeconfig (an existing cluster: --kubeconfig)")
	f.kube.add(fl)
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report (one testcase per check) to this file")
	fl.StringVar(&f.json, "json", "", "write a JSON report (--submission) to this file")
	fl.StringVar(&f.markdown, "markdown", "", "write a Markdown summary to this file")
	fl.StringVar(&f.html, "html", "", "write a self-contained HTML report to this file: a section per submission with its score, each check with the points it lost and why, and the timeline")
	fl.StringVar(&f.out, "out", "grades", "directory for the scoreboard and per-learner reports (--submissions)")
	fl.BoolVar(&f.keep, "keep-on-failure", false, "leave the cluster of a submission that did not pass up for inspection")
	fl.BoolVar(&f.timeline, "timeline", false, "print the timeline of each grading")
	fl.StringVar(&f.on, "on", "", "grade --submissions in pods of the Kubernetes cluster of this kubeconfig (a class cluster) instead of on this machine")
	fl.StringVar(&f.onContext, "on-context", "", "with --on: the kubeconfig's context to use (default its current context)")
	fl.StringVar(&f.image, "image", "", "with --on: the grader image the pods run (default: the one `kubelab images build` makes of this binary)")
	return cmd
}

// checkExerciseBackend refuses, before any submission is graded, an
// exercise that needs what the runner's backend lacks (every submission
// would fail the same way).
func checkExerciseBackend(r *engine.Runner, ex *grade.Exercise) error {
	t := ex.Topology()
	t.Name = ex.Metadata.Name
	b, err := r.Backend(t) // makes nothing yet
	if err != nil {
		return err
	}
	return ex.CheckBackend(b)
}

func gradeRunner(g *globals, f *gradeFlags) (*engine.Runner, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	backend, err := backendFor(g, f.backend, bin, &f.kube)
	if err != nil {
		return nil, err
	}
	backend = keptOnFailure(g, f.backend, bin, backend, f.keep)
	return &engine.Runner{Backend: backend, Binary: bin, KeepOnFailure: f.keep, Observe: g.hooks.observe, Words: g.words, Traces: f.html != "" || f.json != "",
		Progress: engine.ConsoleProgress(g.streams.Err)}, nil
}

// gradeOne grades --submission and writes its reports; the error says
// whether it passed.
func gradeOne(cmd *cobra.Command, g *globals, f *gradeFlags, r *engine.Runner, ex *grade.Exercise) error {
	sub, err := grade.ReadSubmission(f.submission, &ex.Spec.Submission)
	if err != nil {
		return invalid(err)
	}
	gr, err := grade.Run(cmd.Context(), r, ex, sub, f.learner)
	if err != nil {
		return err
	}
	printGrade(g.streams.Out, g.words, gr, f.timeline)
	md := func(w io.Writer) error { return grade.WriteMarkdown(w, gr) }
	if err := errors.Join(
		writeFile(f.junit, func(w io.Writer) error { return grade.WriteJUnit(w, []*grade.Grade{gr}) }),
		writeFile(f.json, func(w io.Writer) error { return grade.WriteJSON(w, gr) }),
		writeFile(f.markdown, md),
		g.writeHTML(f.html, []*engine.Result{gr.Result()}),
		appendStepSummary(md),
	); err != nil {
		return err
	}
	switch {
	case gr.Status == grade.StatusError:
		return cannotRun(fmt.Errorf("%w: %s", ErrNotGraded, gr.Error))
	case gr.Status == grade.StatusRefused:
		return invalid(fmt.Errorf("%s: score 0/%d: %s", ex.Metadata.Name, gr.Max, gr.Error))
	case !gr.Passed:
		return withCode(ExitFailed, fmt.Errorf("%s: score %d/%d is %w %d", ex.Metadata.Name, gr.Score, gr.Max, ErrNotPassed, gr.PassingScore))
	}
	return nil
}

// gradeBatch grades every learner of --submissions and writes the
// scoreboard and per-learner reports.
func gradeBatch(cmd *cobra.Command, g *globals, f *gradeFlags, r *engine.Runner, ex *grade.Exercise) error {
	learners, err := grade.Learners(f.submissions)
	if err != nil {
		return invalid(err)
	}
	if f.backend == backendKubeconfig {
		// Every submission's objects go to the namespace the exercise
		// names, on the one cluster: two at once would collide.
		if cmd.Flags().Changed("parallel") && f.parallel > 1 {
			return invalidf("grade: --parallel %d needs a cluster per submission; with --backend kubeconfig every submission uses the exercise's namespace (%s) of one cluster, so they are graded one at a time", f.parallel, ex.Topology().Namespace)
		}
		f.parallel = 1
	}
	fmt.Fprintf(g.streams.Err, "grading %d submissions of %s, %d at a time\n", len(learners), ex.Metadata.Name, max(f.parallel, 1))
	grades, err := grade.RunAll(cmd.Context(), r, ex, learners, f.parallel)
	return writeBatch(g, f, ex, grades, err)
}

// writeBatch prints the grades of a batch and writes its scoreboard and
// per-learner reports; err is the batch's own (an interrupt).
func writeBatch(g *globals, f *gradeFlags, ex *grade.Exercise, grades []*grade.Grade, err error) error {
	for _, gr := range grades {
		printGrade(g.streams.Out, g.words, gr, f.timeline)
	}
	if err != nil {
		return err
	}
	sb := grade.NewScoreboard(ex, grades)
	fmt.Fprintln(g.streams.Out)
	if err := sb.WriteTable(g.streams.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	errs := []error{
		writeFile(filepath.Join(f.out, "scoreboard.csv"), sb.WriteCSV),
		writeFile(filepath.Join(f.out, "scoreboard.json"), sb.WriteJSON),
		writeFile(f.junit, func(w io.Writer) error { return grade.WriteJUnit(w, grades) }),
		writeFile(f.markdown, sb.WriteMarkdown),
		g.writeHTML(f.html, gradeResults(grades)),
		appendStepSummary(sb.WriteMarkdown),
	}
	for _, gr := range grades {
		base := filepath.Join(f.out, reportName(gr.Learner))
		errs = append(errs,
			writeFile(base+".json", func(w io.Writer) error { return grade.WriteJSON(w, gr) }),
			writeFile(base+".md", func(w io.Writer) error { return grade.WriteMarkdown(w, gr) }))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(g.streams.Out, "\nscoreboard: %s, %s\n", filepath.Join(f.out, "scoreboard.csv"), filepath.Join(f.out, "scoreboard.json"))
	failed := 0
	for _, gr := range grades {
		if gr.Status == grade.StatusError {
			failed++
		}
	}
	if failed > 0 {
		return cannotRun(fmt.Errorf("%w %d of %d submissions", ErrNotGraded, failed, len(grades)))
	}
	return nil
}

// gradeResults are the grades as lab results, for the HTML report.
func gradeResults(grades []*grade.Grade) []*engine.Result {
	out := make([]*engine.Result, 0, len(grades))
	for _, gr := range grades {
		out = append(out, gr.Result())
	}
	return out
}

func printGrade(w io.Writer, p *i18n.Printer, gr *grade.Grade, timeline bool) {
	grade.WriteSummary(w, p, gr)
	if timeline {
		p.Fprintf(w, "\nTimeline:\n")
		for _, e := range gr.Timeline {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// reportName makes a learner's name safe as a file name.
func reportName(learner string) string {
	r := strings.NewReplacer("/", "_", "\\", "_", "..", "_")
	if n := r.Replace(learner); n != "" {
		return n
	}
	return "submission"
}

// writeFile writes path with fn ("" = do nothing).
func writeFile(path string, fn func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// appendStepSummary appends to $GITHUB_STEP_SUMMARY when it is set.
func appendStepSummary(fn func(io.Writer) error) error {
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("job summary %s: %w", path, err)
	}
	return f.Close()
}

func newExerciseCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exercise",
		Short: "Show, scaffold, validate and list graded exercises; start and stop one on a live cluster",
	}
	cmd.AddCommand(newExerciseShowCommand(g), newExerciseInitCommand(g), newExerciseValidateCommand(g), newExerciseListCommand(g),
		g.addFresh(newExerciseStartCommand(g)), newExerciseStopCommand(g))
	return cmd
}

func newExerciseShowCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "show EXERCISE",
		Short:   "Print an exercise's statement for learners (Markdown): the task, what to submit, how it is graded",
		Example: `  kubelab exercise show exercises/pdb-drain > TASK.md`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := g.loadExercise(g.coursePath(args[0]))
			if err != nil {
				return invalid(err)
			}
			return grade.WriteExerciseStatement(g.streams.Out, g.words, ex)
		},
	}
}

func newExerciseInitCommand(g *globals) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "init NAME",
		Short:   "Scaffold a new exercise: exercise.yaml, solution/ and wrong/ samples that grade as documented",
		Example: `  kubelab exercise init rolling-update --dir exercises`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := grade.InitExercise(dir, args[0]); err != nil {
				return err
			}
			root := filepath.Join(dir, args[0])
			fmt.Fprintf(g.streams.Out, "created %s\n  edit %s, then check it with:\n  kubelab exercise validate %s\n  kubelab grade %s --submission %s\n",
				root, filepath.Join(root, grade.ExerciseFile), root, root, filepath.Join(root, "solution"))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to create the exercise in")
	return cmd
}

func newExerciseValidateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate EXERCISE...",
		Short: "Check exercises (schema, operations, contract, samples' refusals and scores) without booting anything",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, a := range args {
				ex, err := g.loadExercise(g.coursePath(a))
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(g.streams.Out, "%s: ok (%s, %d checks, %d points, %d samples)\n", ex.File(), ex.Metadata.Name, len(ex.Spec.Checks), ex.MaxScore(), len(ex.Spec.Samples))
			}
			return invalid(errors.Join(errs...))
		},
	}
}

func newExerciseListCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list [DIR]",
		Short: "List the exercises under DIR (default exercises): name, title, points, difficulty",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := g.coursePath("exercises")
			if len(args) == 1 {
				dir = args[0]
			}
			files, err := filepath.Glob(filepath.Join(dir, "*", grade.ExerciseFile))
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return invalidf("no exercises (*/%s) in %s", grade.ExerciseFile, dir)
			}
			w := i18n.NewTabWriter(g.streams.Out) // titles may be Chinese
			g.words.Fprintf(w, "EXERCISE\tTITLE\tPOINTS\tDIFFICULTY\n")
			var errs []error
			for _, file := range files {
				ex, err := g.loadExercise(file)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", ex.Dir(), ex.Metadata.Title, ex.MaxScore(), ex.Metadata.Difficulty)
			}
			return errors.Join(w.Flush(), invalid(errors.Join(errs...)))
		},
	}
}
