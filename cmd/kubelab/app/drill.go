package app

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/internal/i18n"
)

type drillFlags struct {
	backend  string
	noPrompt bool
	keep     bool
	reports  string
	junit    string
	json     string
	html     string
	answer   string
	kube     kubeFlags
	// answerText is the answer read from --answer-file.
	answerText string
	// iv are the flags of interview mode.
	iv interviewFlags
}

// ErrDrillsFailed is returned by `kubelab drill` when a scenario failed.
var ErrDrillsFailed = errors.New("drills failed")

func newDrillCommand(g *globals) *cobra.Command {
	f := &drillFlags{}
	cmd := &cobra.Command{
		Use:   "drill FEATURE...",
		Short: "Interview drills: answer a question, then watch a real cluster do it, next to the model answer",
		Long: `Runs interview drills written as Gherkin features (see features/README.md).
For each feature file: shows the interview question alone, lets you type
your answer (an empty line ends it; Enter alone skips; or --answer-file),
runs the scenarios on a real cluster with live progress, then shows what
the cluster actually did (leaders, faults, pod and node changes, recovery
times) next to your answer and the model answer, and each of the model
answer's key points, made or missed by yours, with the cluster's evidence.

--interview asks random questions of the course against the clock, then
runs and scores them and names your weakest topics; --history shows your
sessions. There is no prompt with --no-prompt or when stdin is not a
terminal.`,
		Example: `  kubelab drill list                 # every question (also: kubelab drill)
  kubelab drill features/etcd-leader.feature
  kubelab drill features/etcd-leader.feature --answer-file answer.txt
  kubelab drill --interview --topic etcd-raft,rbac --count 2 --time 2m
  kubelab drill features/ --no-prompt --reports out/
  kubelab drill features/taints.feature --no-prompt --html drill.html --junit drill.xml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.iv.history:
				return interviewHistory(g)
			case f.iv.on:
				if len(args) > 0 {
					return invalidf("drill --interview picks its questions (--topic, --count); it takes no FEATURE")
				}
				return drill(cmd.Context(), g, f, nil)
			case len(args) == 0 || (len(args) == 1 && args[0] == "list"):
				return listDrills(g)
			}
			return drill(cmd.Context(), g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.noPrompt, "no-prompt", false, "do not ask for an answer")
	fl.BoolVar(&f.iv.on, "interview", false, "interview mode: random questions of the course (--topic, --count), each against the clock (--time), then the runs, the scores and your weakest topics, saved for --history")
	fl.StringSliceVar(&f.iv.topics, "topic", nil, "with --interview: ask only about these course topics (kubelab list --topics)")
	fl.IntVar(&f.iv.count, "count", 3, "with --interview: how many questions")
	fl.DurationVar(&f.iv.per, "time", 3*time.Minute, "with --interview: time for each answer")
	fl.Uint64Var(&f.iv.seed, "seed", 0, "with --interview: the seed of the random choice (0: a new one each time)")
	fl.BoolVar(&f.iv.history, "history", false, "show your interview sessions and each topic's key points over them")
	fl.StringVar(&f.answer, "answer-file", "", "read your answer from this file instead of the terminal (one drill); it is scored against the drill's key points")
	fl.StringVar(&f.backend, "backend", backendEmbedded, "where the clusters run: embedded, docker (drills tagged @docker need docker), or kubeconfig (an existing cluster: --kubeconfig)")
	f.kube.add(fl)
	fl.BoolVar(&f.keep, "keep-on-failure", os.Getenv("KUBELAB_KEEP") == "1", "leave a failed scenario's cluster up for inspection ($KUBELAB_KEEP=1)")
	fl.StringVar(&f.reports, "reports", "", "write a cucumber JSON and a JUnit XML report of each feature to this directory")
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file: a testsuite per scenario, a testcase per step (the model kubelab run and grade write)")
	fl.StringVar(&f.json, "json", "", "write a JSON report to this file (as kubelab run writes it: a result per scenario)")
	fl.StringVar(&f.html, "html", "", "write a self-contained HTML report to this file: a section per scenario with its steps, timeline swimlanes and recovery times")
	return cmd
}

// listDrills prints every drill of features/: file, topics, question.
func listDrills(g *globals) error {
	drills, err := g.loadDrills(drillDirs(g)...)
	if err != nil {
		return invalid(err)
	}
	w := i18n.NewTabWriter(g.streams.Out)
	g.words.Fprintf(w, "FEATURE\tTOPICS\tQUESTION\n")
	for _, d := range drills {
		q := i18n.Truncate(i18n.Reflow(d.Question, math.MaxInt32), 110)
		fmt.Fprintf(w, "%s\t%s\t%s\n", d.Path, strings.Join(d.Topics, ","), q)
	}
	return w.Flush()
}

func drill(ctx context.Context, g *globals, f *drillFlags, args []string) error {
	var drills []*features.Drill
	if !f.iv.on {
		var err error
		if drills, err = g.loadDrills(g.coursePaths(args)...); err != nil {
			return invalid(err)
		}
	} else if f.iv.count < 1 || f.iv.per <= 0 {
		return invalidf("drill --interview: --count must be at least 1 and --time positive (got %d, %s)", f.iv.count, f.iv.per)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	for _, d := range drills {
		if d.Docker && f.backend != backendDocker {
			return invalidf("%s needs real nodes: run it with --backend docker", d.Path)
		}
	}
	if f.answer != "" {
		if len(drills) != 1 {
			return invalidf("--answer-file answers one drill; %d were given", len(drills))
		}
		b, err := os.ReadFile(f.answer)
		if err != nil {
			return invalid(fmt.Errorf("--answer-file: %w", err))
		}
		f.answerText = strings.TrimSpace(string(b))
	}
	backend, err := backendFor(g, f.backend, bin, &f.kube)
	if err != nil {
		return invalid(err)
	}
	backend = keptOnFailure(g, f.backend, bin, backend, f.keep)
	if f.reports != "" {
		if err := os.MkdirAll(f.reports, 0o755); err != nil {
			return err
		}
	}
	r := engine.Runner{Backend: backend, Binary: bin, Observe: g.hooks.observe, Words: g.words, Traces: f.html != "" || f.json != "" || f.reports != "", Progress: quietWhenInterrupted(ctx, g, engine.ConsoleProgress(g.streams.Err))}
	if f.iv.on {
		return interview(ctx, g, f, &f.iv, r)
	}
	reps, err := drillAll(ctx, g, f, r, drills)
	// The scenarios that ran are reported, also when a later one could not.
	if rerr := g.writeReports(f.junit, f.json, f.html, features.Results(reps)); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// drillAll asks each drill's question, runs its scenarios and shows what
// they did; it returns the reports of every scenario that ran.
func drillAll(ctx context.Context, g *globals, f *drillFlags, r engine.Runner, drills []*features.Drill) ([]features.Report, error) {
	out, p := g.streams.Out, g.words
	var answers *lineReader
	if !f.noPrompt && isTerminal(g.streams.In) {
		answers = newLineReader(g.streams.In)
	}
	var all []features.Report
	failed := 0
	for i, d := range drills {
		p.Fprintf(out, "\n━━ Drill %d/%d: %s (%s)\n\n", i+1, len(drills), d.Title, d.Path)
		p.Fprintf(out, "Question:\n%s\n", indentText(reflow(d.Question, 74), "  "))
		// The question comes alone: the scenarios' names would give half
		// the answer away.
		answer, asked := f.answerText, f.answer != ""
		if answers != nil && !asked {
			p.Fprintf(out, "\nYour answer (an empty line ends it; Enter alone skips):\n")
			var err error
			if answer, err = answers.readAnswer(ctx, out); err != nil {
				return all, err
			}
			asked = true
		}
		p.Fprintf(out, "\nRunning the drill on a real cluster:\n")
		for _, s := range d.Scenarios {
			p.Fprintf(out, "\nScenario: %s\n", s.Name)
			if s.Description != "" {
				fmt.Fprintf(out, "%s\n", indentText(reflow(s.Description, 74), "  "))
			}
		}
		reps, err := runDrill(ctx, g, f, r, d)
		features.ScoreRun(p, d, answer, asked, reps)
		all = append(all, reps...)
		if err != nil && !errors.Is(err, features.ErrFailed) {
			return all, cannotRun(err)
		}
		if err != nil {
			failed++
		}
		showDrill(out, p, d, reps, answer, asked)
		if ctx.Err() != nil {
			return all, ctx.Err()
		}
	}
	if failed > 0 {
		return all, withCode(ExitFailed, fmt.Errorf("%w: %d of %d", ErrDrillsFailed, failed, len(drills)))
	}
	if len(all) > 0 && !slices.ContainsFunc(all, func(r features.Report) bool { return r.Skipped == "" }) {
		// Nothing ran to its end: that has not passed.
		return all, invalidf("drill: none of the %d scenarios can run on the %s backend (each one's reason is above)", len(all), f.backend)
	}
	return all, nil
}

// runDrill runs one feature's scenarios and returns what each did.
func runDrill(ctx context.Context, g *globals, f *drillFlags, r engine.Runner, d *features.Drill) ([]features.Report, error) {
	return runDrillTo(ctx, g, f, r, d, g.streams.Err)
}

// runDrillTo is runDrill with the library's messages going to out.
func runDrillTo(ctx context.Context, g *globals, f *drillFlags, r engine.Runner, d *features.Drill, out io.Writer) ([]features.Report, error) {
	var reps []features.Report
	lib := &features.Library{Runner: &r, Lang: g.lang, KeepOnFailure: f.keep, Out: out, Evidence: features.EvidenceExprs(d.KeyPoints),
		OnScenario: func(rep features.Report) { reps = append(reps, rep) }}
	// Live progress comes from the engine (Runner.Progress); godog's own
	// console output would only repeat it, so it is dropped.
	format := "progress"
	base := filepath.Join(f.reports, strings.TrimSuffix(filepath.Base(d.Path), filepath.Ext(d.Path)))
	if f.reports != "" {
		format += ",cucumber:" + base + ".cucumber.json"
	}
	err := features.Run(ctx, lib, features.Options{Paths: []string{d.Path}, Format: format, Output: io.Discard, NoColors: true})
	if f.reports != "" {
		// kubelab's JUnit model, not godog's: the one labs and grades write.
		if jerr := writeFile(base+".junit.xml", func(w io.Writer) error { return engine.WriteJUnit(w, features.Results(reps)) }); jerr != nil {
			return reps, errors.Join(err, jerr)
		}
	}
	return reps, err
}

// showDrill prints what the cluster did in each scenario, then the
// learner's answer and the model answer.
func showDrill(w io.Writer, p *i18n.Printer, d *features.Drill, reps []features.Report, answer string, asked bool) {
	for _, r := range reps {
		status := p.S("PASSED")
		switch {
		case r.Err != nil:
			status = p.S("FAILED")
		case r.Skipped != "":
			status = p.S("SKIPPED")
		}
		p.Fprintf(w, "\nWhat the cluster did in %q (%s in %s):\n", cmp.Or(r.Title, r.Scenario), status, r.Duration.Round(100*time.Millisecond))
		showScenario(w, p, r)
	}
	if asked {
		if answer == "" {
			answer = p.S("(skipped)")
		}
		p.Fprintf(w, "\nYour answer:\n%s\n", indentText(answer, "  "))
	}
	p.Fprintf(w, "\nModel answer:\n%s\n", indentText(d.ModelAnswer, "  "))
	showKeyPoints(w, p, d, reps, asked)
}

// showScenario prints what the cluster did in one scenario: its
// timeline, the recovery times, its failure, and where its cluster is if
// it was kept.
func showScenario(w io.Writer, p *i18n.Printer, r features.Report) {
	for _, e := range r.Timeline {
		switch {
		case e.Kind == engine.EventStep && e.Detail == "started":
			fmt.Fprintf(w, "  %8.3fs  ▶ %s\n", e.At.Seconds(), e.Subject)
		case e.Kind == engine.EventStep && e.Detail == string(engine.Failed):
			p.Fprintf(w, "  %8.3fs  ✘ %s failed\n", e.At.Seconds(), e.Subject)
		case e.Kind == engine.EventStep:
		default:
			fmt.Fprintf(w, "  %8.3fs      %-12s %s: %s\n", e.At.Seconds(), e.Kind, e.Subject, engine.DetailIn(p, e))
		}
	}
	if len(r.Recovery) > 0 {
		p.Fprintf(w, "\nRecovery times:\n")
		for _, rc := range r.Recovery {
			fmt.Fprintf(w, "  %s\n", engine.DescribeIn(p, rc))
		}
	}
	if r.Err != nil {
		p.Fprintf(w, "\nThe scenario failed:\n%s\n", indentText(r.Err.Error(), "  "))
	}
	if r.Skipped != "" {
		p.Fprintf(w, "\nThe scenario stopped: this backend cannot run it:\n%s\n", indentText(r.Skipped, "  "))
	}
	if r.Kubeconfig != "" {
		p.Fprintf(w, "\nIts cluster is still up: export KUBECONFIG=%s\n", r.Kubeconfig)
	}
}

// showKeyPoints prints each key point of the drill: made or missed by the
// answer (and by which sentence), and what the cluster showed of it.
func showKeyPoints(w io.Writer, p *i18n.Printer, d *features.Drill, reps []features.Report, asked bool) {
	if len(d.KeyPoints) == 0 || len(reps) == 0 || reps[len(reps)-1].Drill == nil {
		return
	}
	scores := reps[len(reps)-1].Drill.KeyPoints
	if asked {
		p.Fprintf(w, "\nKey points: your answer made %d of %d\n", features.Made(scores), len(scores))
	} else {
		p.Fprintf(w, "\nKey points (what a good answer says):\n")
	}
	for _, s := range scores {
		mark := "•"
		if asked {
			mark = map[bool]string{true: "✔", false: "✘"}[s.Made]
		}
		fmt.Fprintf(w, "  %s %s\n", mark, reflowHanging(s.Point, 72, "    "))
		switch {
		case asked && s.Made:
			p.Fprintf(w, "      you said: %q\n", s.By)
		case asked:
			p.Fprintf(w, "      missed; it takes: %s\n", strings.Join(s.Missing, ", "))
		}
		for _, e := range s.Evidence {
			p.Fprintf(w, "      the cluster: %s\n", e)
		}
	}
}

// reflowHanging reflows s to width, indenting the lines after the first.
func reflowHanging(s string, width int, pad string) string {
	return strings.TrimPrefix(indentText(reflow(s, width), pad), pad)
}

func isTerminal(v any) bool {
	if u, ok := v.(interface{ Unwrap() io.Writer }); ok {
		v = u.Unwrap()
	}
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lineReader reads lines in the background so that a prompt can be left
// when ctx ends (Ctrl-C does not kill the process while a read blocks).
type lineReader struct {
	lines chan string
	err   chan error
}

func newLineReader(in io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string), err: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		lr.err <- errors.Join(sc.Err(), io.EOF)
	}()
	return lr
}

// readAnswer reads lines until an empty one (or end of input).
func (lr *lineReader) readAnswer(ctx context.Context, w io.Writer) (string, error) {
	var lines []string
	for {
		fmt.Fprint(w, "> ")
		select {
		case <-ctx.Done():
			// What was entered so far, for an answer cut off by a clock.
			return strings.Join(lines, "\n"), ctx.Err()
		case err := <-lr.err:
			lr.err <- err
			fmt.Fprintln(w)
			return strings.Join(lines, "\n"), nil
		case l := <-lr.lines:
			if strings.TrimSpace(l) == "" {
				return strings.Join(lines, "\n"), nil
			}
			lines = append(lines, l)
		}
	}
}

// reflow rewraps the paragraphs of s to width columns (i18n.Reflow:
// Chinese wraps too).
func reflow(s string, width int) string { return i18n.Reflow(s, width) }

func indentText(s, pad string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// drillDirs are the checkout's drill directories: features/, and
// features/docker/ (drills that need real nodes) when it exists.
func drillDirs(g *globals) []string {
	dirs := []string{g.coursePath("features")}
	if m, _ := filepath.Glob(filepath.Join(g.coursePath("features/docker"), "*.feature")); len(m) > 0 {
		dirs = append(dirs, g.coursePath("features/docker"))
	}
	return dirs
}
