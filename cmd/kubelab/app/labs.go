package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/curriculum"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/report"
)

type runFlags struct {
	backend  string
	junit    string
	json     string
	html     string
	keep     bool
	timeline bool
	parallel int
	kube     kubeFlags
}

// ErrLabsFailed is returned by `kubelab run` when a lab did not pass.
var ErrLabsFailed = errors.New("labs failed")

func newRunCommand(g *globals) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run LAB...",
		Short: "Run labs: boot each lab's cluster, run its steps, report verdicts",
		Long: `Run boots each lab's cluster, runs its steps and removes the cluster.
A lab's cluster is named after the lab; with --name, a single lab's
cluster gets that name, and several labs' clusters get it as a prefix.
With --parallel N, N labs run side by side, each on its own cluster; each
lab's progress and timeline are printed together when it ends, and the
reports list the labs in the order given.`,
		Example: `  kubelab run labs/02-etcd-leader-failover.yaml
  kubelab run labs/*.yaml --junit report.xml --json report.json
  kubelab run labs/ --parallel 2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			labs, err := g.loadLabs(g.coursePaths(args))
			if err != nil {
				return err
			}
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			backend, err := backendFor(g, f.backend, bin, &f.kube)
			if err != nil {
				return invalid(err)
			}
			if f.parallel < 1 {
				return invalidf("run: --parallel must be at least 1, got %d", f.parallel)
			}
			if f.parallel > 1 && f.backend == backendKubeconfig {
				return invalidf("run: --parallel %d needs a cluster per lab; with --backend kubeconfig every lab shares one cluster, so labs run one at a time", f.parallel)
			}
			backend = keptOnFailure(g, f.backend, bin, backend, f.keep)
			if cmd.Flags().Changed("name") {
				backend = namedClusters(backend, g.name, len(labs) > 1)
			}
			return runLabs(cmd.Context(), g, f, labs, &engine.Runner{Backend: backend, Binary: bin, KeepOnFailure: f.keep, Observe: g.hooks.observe, Words: g.words,
				Traces: f.html != "" || f.json != "", Progress: quietWhenInterrupted(cmd.Context(), g, engine.ConsoleProgress(g.streams.Err))})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", backendEmbedded, "where the cluster runs: embedded, docker, or kubeconfig (an existing cluster: --kubeconfig)")
	f.kube.add(fl)
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&f.json, "json", "", "write a JSON report to this file")
	fl.StringVar(&f.html, "html", "", "write a self-contained HTML report (steps, timeline swimlanes, apply trace) to this file")
	fl.BoolVar(&f.keep, "keep-on-failure", false, "leave a failed lab's cluster up for inspection")
	fl.BoolVar(&f.timeline, "timeline", false, "print every lab's timeline, not only failed ones")
	fl.IntVar(&f.parallel, "parallel", 1, "labs run at a time, each on its own cluster (not with --backend kubeconfig)")
	return cmd
}

// runLabs runs labs, --parallel at a time, prints and writes the
// reports; its error carries the exit code (a failed lab 1, a lab that
// could not run 3, interrupted 130).
func runLabs(ctx context.Context, g *globals, f *runFlags, labs []*load.Lab, r *engine.Runner) error {
	var (
		results []*engine.Result
		err     error
	)
	if f.parallel > 1 && len(labs) > 1 {
		results, err = runSideBySide(ctx, g, f, labs, r)
	} else {
		results, err = runInTurn(ctx, g, f, labs, r)
	}
	if err != nil {
		return err
	}
	engine.WriteSummary(g.streams.Out, g.words, results)
	if err := g.writeReports(f.junit, f.json, f.html, results); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	errored, skipped := 0, 0
	for _, r := range results {
		switch r.Status {
		case engine.Failed:
			return withCode(ExitFailed, ErrLabsFailed)
		case engine.Errored:
			errored++
		case engine.Skipped:
			skipped++
		}
	}
	if skipped > 0 && skipped == len(results) {
		// Nothing ran: a CI job that ran no lab has not passed.
		return invalidf("run: none of the %d labs can run on the %s backend (each one's reason is above)", skipped, f.backend)
	}
	if errored > 0 {
		return cannotRun(fmt.Errorf("%w: %d of %d labs could not run", ErrLabsFailed, errored, len(results)))
	}
	return nil
}

// runInTurn runs labs one after the other, printing progress as it comes.
func runInTurn(ctx context.Context, g *globals, f *runFlags, labs []*load.Lab, r *engine.Runner) ([]*engine.Result, error) {
	var results []*engine.Result
	for _, l := range labs {
		res, err := runOneLab(ctx, g, f, l, r, g.streams.Out, len(labs) == 1)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
		if ctx.Err() != nil {
			break
		}
	}
	return results, nil
}

// runSideBySide runs f.parallel labs at a time, each on its own cluster.
// A lab's progress and timeline are buffered and printed in one block when
// it ends, so the console reads lab by lab; results keep the labs' order.
// A lab that cannot run does not stop the others; the first such error is
// returned once all have ended.
func runSideBySide(ctx context.Context, g *globals, f *runFlags, labs []*load.Lab, r *engine.Runner) ([]*engine.Result, error) {
	fmt.Fprintf(g.streams.Err, "running %d labs, %d at a time\n", len(labs), f.parallel)
	results := make([]*engine.Result, len(labs))
	errs := make([]error, len(labs))
	var printMu sync.Mutex
	engine.SideBySide(ctx, len(labs), f.parallel, func(i int) {
		var progress, out bytes.Buffer
		rr := *r
		rr.Progress = quietWhenInterrupted(ctx, g, engine.ConsoleProgress(&progress))
		results[i], errs[i] = runOneLab(ctx, g, f, labs[i], &rr, &out, false)
		printMu.Lock()
		defer printMu.Unlock()
		_, _ = g.streams.Err.Write(progress.Bytes())
		_, _ = g.streams.Out.Write(out.Bytes())
	}, nil)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var done []*engine.Result
	for _, res := range results {
		if res != nil {
			done = append(done, res)
		}
	}
	return done, nil
}

// runOneLab runs one lab and writes its skip notice or timeline to out. A
// lab the backend cannot run is skipped, unless it is the only one (then
// the error is invalid input: nothing booted).
func runOneLab(ctx context.Context, g *globals, f *runFlags, l *load.Lab, r *engine.Runner, out io.Writer, only bool) (*engine.Result, error) {
	res, err := r.Run(ctx, l)
	if errors.Is(err, cluster.ErrMissingCapability) {
		if only {
			return nil, invalid(err)
		}
		fmt.Fprintf(out, "skipped %s: %v\n", l.Metadata.Name, err)
		return &engine.Result{Lab: l.Metadata.Name, Title: l.Metadata.Title, File: l.File(), Status: engine.Skipped, Error: err.Error()}, nil
	}
	if err != nil {
		return nil, cannotRun(err)
	}
	if ctx.Err() == nil && (f.timeline || !res.Passed()) {
		fmt.Fprintf(out, "\nTimeline of %s:\n", res.Lab)
		engine.WriteTimeline(out, res)
	}
	return res, nil
}

// namedClusters names the labs' clusters after --name: the name itself
// for a single lab, a prefix for several.
func namedClusters(nb engine.NewBackend, name string, prefix bool) engine.NewBackend {
	return func(t cluster.Topology) (cluster.Backend, error) {
		if prefix {
			t.Name = strings.TrimRight(truncate(name+"-"+t.Name, 40), "-")
		} else {
			t.Name = name
		}
		return nb(t)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// quietWhenInterrupted drops the progress of steps failing because ctx
// ended (an interruption is not their failure) and says once that
// kubelab is cleaning up.
func quietWhenInterrupted(ctx context.Context, g *globals, p func(engine.Progress)) func(engine.Progress) {
	var once sync.Once
	return func(e engine.Progress) {
		if ctx.Err() != nil {
			once.Do(func() { fmt.Fprintln(g.streams.Err, "interrupted: removing the clusters started") })
			return
		}
		p(e)
	}
}

func (g *globals) writeReports(junit, jsonPath, htmlPath string, results []*engine.Result) error {
	return errors.Join(
		writeFile(junit, func(w io.Writer) error { return engine.WriteJUnit(w, results) }),
		writeFile(jsonPath, func(w io.Writer) error { return engine.WriteJSON(w, results) }),
		g.writeHTML(htmlPath, results),
	)
}

// writeHTML writes the HTML report of results to path ("" = do nothing):
// the page `kubelab report` draws from their JSON report; drills and
// grades pass their scenarios and submissions as results.
func (g *globals) writeHTML(path string, results []*engine.Result) error {
	return writeFile(path, func(w io.Writer) error { return report.HTMLOf(w, results, g.words) })
}

func newReportCommand(g *globals) *cobra.Command {
	var html string
	cmd := &cobra.Command{
		Use:     "report REPORT.json --html OUT.html",
		Short:   "Draw a JSON report of kubelab run as a self-contained HTML page",
		Example: "  kubelab run labs/ --json report.json\n  kubelab report report.json --html report.html",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" {
				return invalidf("report: --html OUT.html is required")
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return invalid(err)
			}
			if _, err := report.Parse(b); err != nil {
				return invalid(fmt.Errorf("%s: %w", args[0], err))
			}
			return writeFile(html, func(w io.Writer) error { return report.HTMLIn(w, b, g.words) })
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write the HTML page to this file")
	return cmd
}

// loadLabs loads every file (directories: every *.yaml inside) and reports
// the problems of all of them at once.
func (g *globals) loadLabs(args []string) ([]*load.Lab, error) {
	paths, err := expand(args)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, invalidf("no labs (*.yaml) in %s", strings.Join(args, ", "))
	}
	var labs []*load.Lab
	var errs []error
	for _, p := range paths {
		l, err := load.ReadLab(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.localize(p, l)
		labs = append(labs, l)
	}
	if len(errs) > 0 {
		return nil, invalid(errors.Join(errs...))
	}
	return labs, nil
}

func expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, invalid(err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

func newValidateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate LAB...",
		Short: "Check lab files (schema, expressions, manifests, topology) without booting anything",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			labs, err := g.loadLabs(g.coursePaths(args))
			if err != nil {
				return err
			}
			for _, l := range labs {
				fmt.Fprintf(g.streams.Out, "%s: ok (%s, %d steps)\n", l.File(), l.Metadata.Name, len(l.Spec.Steps))
			}
			return nil
		},
	}
}

func newListCommand(g *globals) *cobra.Command {
	var topics bool
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List labs: file, title, the backends they run on, topics, estimated duration (--topics: the course's topics and what practises each)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if topics {
				return listTopics(g)
			}
			dirs := []string{g.coursePath("labs")}
			if len(args) == 1 {
				dirs = g.coursePaths(args[:1])
			} else {
				// The shipped labs' subdirectories: those that look inside
				// nodes, and those that need hundreds of simulated nodes.
				for _, d := range []string{"labs/docker", "labs/embedded"} {
					if st, err := os.Stat(g.coursePath(d)); err == nil && st.IsDir() {
						dirs = append(dirs, g.coursePath(d))
					}
				}
			}
			labs, err := g.loadLabs(dirs)
			if err != nil {
				return err
			}
			w := i18n.NewTabWriter(g.streams.Out) // titles may be Chinese
			g.words.Fprintf(w, "FILE\tTITLE\tBACKEND\tTOPICS\tDURATION\n")
			for _, l := range labs {
				d := "-"
				if l.Metadata.Duration.Duration > 0 {
					d = l.Metadata.Duration.String()
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", l.File(), l.Metadata.Title, labBackends(l), strings.Join(l.Metadata.Topics, ","), d)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&topics, "topics", false, "list the topics of the course with the labs, drills and exercises of each (from labs/, features/, exercises/)")
	return cmd
}

// labBackends says where a lab runs: "docker" when it needs real nodes
// (it looks inside them, reaches a container, cuts a network, or is one
// of labs/docker/, whose kubelets run probes and pods), "embedded,docker"
// when it needs more of the cluster than its API (a component to kill,
// etcd, the audit log...), which an existing cluster (kubeconfig) does
// not give, and "any" otherwise.
func labBackends(l *load.Lab) string {
	needs := l.Needs()
	_, inside := needs[cluster.CapNodeInternals]
	_, cut := needs[cluster.CapPartitions]
	_, ctr := needs[cluster.CapContainers]
	switch {
	case inside || ctr || cut || filepath.Base(filepath.Dir(l.File())) == "docker":
		return "docker"
	case len(needs) > 0:
		return "embedded,docker"
	}
	return "any"
}

// listTopics prints the curriculum index of the checkout's labs/, labs/docker/,
// features/ and exercises/.
func listTopics(g *globals) error {
	cs, _, err := courseIndex(g)
	if err != nil {
		return err
	}
	return curriculum.Write(g.streams.Out, cs)
}

// courseItem is what the index knows of one lab, drill or exercise
// besides its path.
type courseItem struct {
	title  string
	docker bool // it needs real nodes
}

// courseIndex sorts the checkout's labs (labs/, labs/docker/), drills
// (features/) and exercises (exercises/) under the course's topics, and
// returns each one's title.
func courseIndex(g *globals) ([]curriculum.Coverage, map[string]courseItem, error) {
	var ms []curriculum.Material
	items := map[string]courseItem{}
	labs, err := g.loadLabs([]string{g.coursePath("labs")})
	if err != nil {
		return nil, nil, err
	}
	docker, _ := filepath.Glob(filepath.Join(g.coursePath("labs/docker"), "*.yaml"))
	if len(docker) > 0 {
		ls, err := g.loadLabs(docker)
		if err != nil {
			return nil, nil, err
		}
		labs = append(labs, ls...)
	}
	for _, l := range labs {
		ms = append(ms, curriculum.Material{Kind: "lab", Path: l.File(), Topics: l.Metadata.Topics})
		items[l.File()] = courseItem{title: l.Metadata.Title, docker: slices.Contains(docker, l.File())}
	}
	drills, err := g.loadDrills(drillDirs(g)...)
	if err != nil {
		return nil, nil, invalid(err)
	}
	for _, d := range drills {
		ms = append(ms, curriculum.Material{Kind: "drill", Path: d.Path, Topics: d.Topics})
		items[d.Path] = courseItem{title: d.Title, docker: d.Docker}
	}
	exs, _ := filepath.Glob(filepath.Join(g.coursePath("exercises"), "*", "exercise.yaml"))
	for _, f := range exs {
		e, err := g.loadExercise(f)
		if err != nil {
			return nil, nil, invalid(err)
		}
		ms = append(ms, curriculum.Material{Kind: "exercise", Path: f, Topics: e.Metadata.Topics})
		items[f] = courseItem{title: e.Metadata.Title}
	}
	cs, err := curriculum.Index(ms)
	if err != nil {
		return nil, nil, invalid(err)
	}
	return cs, items, nil
}
