package app

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/features"
	"kubelab.dev/kubelab/grade"
	"kubelab.dev/kubelab/load"
	"kubelab.dev/kubelab/ui"
)

type uiFlags struct {
	backend   string
	kube      kubeFlags
	port      int
	noBrowser bool
	patience  time.Duration
}

func newUICommand(g *globals) *cobra.Command {
	f := &uiFlags{}
	cmd := &cobra.Command{
		Use:   "ui [EXERCISE|LAB|FEATURE]",
		Short: "A live exercise, a lab step by step or an interview drill, in the browser, with the machinery drawn as it moves",
		Long: `ui alone serves the course's home page on 127.0.0.1: every topic, each
with its labs, drills and exercises, every one started from the page in
a tab of its own (a kubelab ui of its own, on a cluster of its own), and
the clusters of the home with how many of their components run, each
opened the same way. Ctrl-C stops the views it started and removes the
clusters they booted.

ui --name CLUSTER serves a page for the exercise running on that
cluster: its statement, and its checks re-evaluated whenever the
cluster changes (the same evaluation as kubelab check --watch), with
hints on demand and a Final check button. Work on the cluster with kubectl as
usual (the KUBECONFIG line of exercise start).

With EXERCISE, ui first starts it, as kubelab exercise start does, and
removes that cluster when you stop ui; without, it attaches to the
cluster --name (and the exercise it runs, if any) and leaves it as it
is. With a LAB file, ui boots the lab's cluster and runs the lab from
the page: Next step runs one step, Run to the end the rest and the
lab's hooks; each operation shows its expression and, when it fails,
what it observed; the cluster stays until you stop ui. With a drill's
FEATURE file, the page asks its question, takes your answer, runs the
drill's scenarios on real clusters as you watch, then shows the model
answer beside yours and the key points your answer made or missed, with
what the cluster showed of each (as kubelab drill --answer-file). Every view shows the machinery, live: the etcd members and who
leads, the lease holders, the timeline swimlanes, the requests the
apiservers refused drawn through the request pipeline (authentication,
authorization, admission, validation) to the stage that stopped them,
buttons for faults (kill the etcd, scheduler or controller-manager
leader, take a node down), marked on the timeline, the apply trace of a
Deployment, the scheduler's last decisions plugin by plugin, and on real
nodes (docker) their pod sandboxes and kube-proxy's chains.

The URL carries a random token: only a browser that opened it gets in
(it becomes an HttpOnly, SameSite=Strict cookie). The page has
terminals (tabs, kept across reloads): your shell, as you, with the
cluster's KUBECONFIG and a kubectl that reaches it. Ctrl-C stops ui and
its shells.`,
		Example: `  kubelab ui
  kubelab ui exercises/fix-service-selector
  kubelab ui labs/05-cordon-and-taints.yaml
  kubelab ui features/etcd-leader.feature --lang zh
  kubelab exercise start exercises/fix-pending-pods --name mine && kubelab ui --name mine --no-browser`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g.interruptEndsNormally = true // Ctrl-C is how ui ends
			if len(args) == 0 && !cmd.Flags().Changed("name") && os.Getenv("KUBELAB_NAME") == "" {
				return homeUI(cmd.Context(), g, f)
			}
			return runUI(cmd.Context(), g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", backendEmbedded, "with EXERCISE: where its cluster runs: embedded, docker, or kubeconfig (--kubeconfig)")
	f.kube.add(fl)
	fl.IntVar(&f.port, "port", 0, "port on 127.0.0.1 (0: a free one)")
	fl.BoolVar(&f.noBrowser, "no-browser", false, "print the URL only; do not open a browser")
	fl.DurationVar(&f.patience, "patience", 2*time.Second, "time each non-destructive check gets to pass in a live evaluation (short: the page shows the cluster as it is, and re-evaluates on every change)")
	return cmd
}

func runUI(ctx context.Context, g *globals, f *uiFlags, args []string) error {
	if len(args) == 1 && strings.HasSuffix(args[0], ".feature") {
		return drillUI(ctx, g, f, g.coursePath(args[0]))
	}
	if len(args) == 1 && isLabFile(g.coursePath(args[0])) {
		return labUI(ctx, g, f, g.coursePath(args[0]))
	}
	booted := false
	if len(args) == 1 {
		ex, err := g.loadExercise(g.coursePath(args[0]))
		if err != nil {
			return invalid(err)
		}
		if err := ex.CheckLive(); err != nil {
			return invalid(err)
		}
		if err := startExercise(ctx, g, f.backend, &f.kube, ex); err != nil {
			return err
		}
		booted = true
	}
	b, ex, err := openExercise(ctx, g)
	if errors.Is(err, ErrNoExercise) {
		// A cluster without an exercise: its machinery and terminals.
		b, ex, err = nil, nil, nil
		b, err = openBackend(ctx, g)
	}
	if err != nil {
		return err
	}
	return serveUI(ctx, g, f, b, ex, nil, booted)
}

// isLabFile reports whether path is a lab file rather than an exercise
// (a directory, or its exercise.yaml).
func isLabFile(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || filepath.Base(path) == grade.ExerciseFile {
		return false
	}
	ext := filepath.Ext(path)
	return ext == ".yaml" || ext == ".yml"
}

// labUI boots the lab's cluster, observing all the page draws (the audit
// log, the scheduler's decisions) unless the lab says otherwise, and
// serves the lab step by step on it.
func labUI(ctx context.Context, g *globals, f *uiFlags, path string) error {
	labs, err := g.loadLabs([]string{path})
	if err != nil {
		return invalid(err)
	}
	lab := labs[0]
	if err := nameFree(ctx, g); err != nil {
		return err
	}
	t := lab.Spec.Cluster
	t.Name = g.name
	on := true
	if t.Audit == nil {
		t.Audit = &on
	}
	if t.Scheduler.Record == nil {
		t.Scheduler.Record = &on
	}
	var kf *kubeFlags
	if f.backend == backendKubeconfig {
		kf = &f.kube
	}
	b, err := newBackend(g, f.backend, t, true, kf)
	if err != nil {
		return invalid(err)
	}
	if err := lab.CheckBackend(b); err != nil {
		return invalid(err) // before anything boots
	}
	if err := boot(ctx, g, b); err != nil {
		_ = b.Down(context.WithoutCancel(ctx))
		return err
	}
	return serveUI(ctx, g, f, b, nil, lab, true)
}

// drillUI serves a drill: its question, the learner's answer typed in
// the page, its scenarios run on real clusters (each removed after it),
// then the model answer beside the learner's and the key points.
func drillUI(ctx context.Context, g *globals, f *uiFlags, path string) error {
	drills, err := g.loadDrills(path)
	if err != nil {
		return invalid(err)
	}
	d := drills[0]
	if d.Docker && f.backend != backendDocker {
		return invalidf("%s needs real nodes: run it with --backend docker", d.Path)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	backend, err := backendFor(g, f.backend, bin, &f.kube)
	if err != nil {
		return invalid(err)
	}
	run := func(ctx context.Context, answer string, answered bool, progress func(string)) (*ui.DrillOutcome, error) {
		lw := &lineWriter{line: progress}
		r := engine.Runner{Backend: backend, Binary: bin, Observe: g.hooks.observe, Words: g.words, Progress: engine.ConsoleProgress(lw)}
		reps, err := runDrill(ctx, g, &drillFlags{}, r, d)
		scores := features.ScoreRun(g.words, d, answer, answered, reps)
		out := &ui.DrillOutcome{Passed: err == nil && len(reps) > 0, Answered: answered, Answer: answer, ModelAnswer: d.ModelAnswer,
			KeyPoints: scores, Made: features.Made(scores)}
		for _, rep := range reps {
			var did strings.Builder
			showScenario(&did, g.words, rep)
			sc := ui.DrillScenario{Title: cmp.Or(rep.Title, rep.Scenario), Passed: rep.Err == nil, Seconds: rep.Duration.Seconds(), Did: did.String()}
			out.Scenarios = append(out.Scenarios, sc)
		}
		if err != nil && !errors.Is(err, features.ErrFailed) {
			return out, err
		}
		return out, nil
	}
	srv, err := ui.NewDrill(ui.DrillOptions{Title: d.Title, Path: d.Path, Question: d.Question, Words: g.words, Run: run})
	if err != nil {
		return err
	}
	return serveView(ctx, g, f, srv, "drill "+d.Path,
		"Type your answer in the page, then run the drill: each scenario boots its own cluster. Ctrl-C stops ui.")
}

// view is a page of package ui.
type view interface {
	Listen(port int) (net.Listener, error)
	URL() string
	Serve(ctx context.Context, ln net.Listener) error
}

// serveView serves v on --port until ctx ends, printing its URL (for
// what) and hint, and opening a browser where one can show it.
func serveView(ctx context.Context, g *globals, f *uiFlags, v view, what, hint string) error {
	ln, err := v.Listen(f.port)
	if err != nil {
		return invalid(err)
	}
	fmt.Fprintf(g.streams.Out, "kubelab ui for %s: %s\n", what, v.URL())
	fmt.Fprintln(g.streams.Err, hint)
	if !f.noBrowser {
		openBrowser(v.URL())
	}
	if err := v.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// lineWriter calls line with each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// serveUI serves the view of cluster b (and of the exercise it runs, if
// any) until ctx ends; a cluster ui booted (booted) is removed then.
func serveUI(ctx context.Context, g *globals, f *uiFlags, b cluster.Backend, ex *grade.Exercise, lab *load.Lab, booted bool) error {
	if booted {
		defer func() {
			_ = b.Down(context.WithoutCancel(ctx))
			fmt.Fprintf(g.streams.Err, "removed cluster %q\n", g.name)
		}()
	}
	r, err := liveRunner(g, false)
	if err != nil {
		return err
	}
	name := g.name
	switch {
	case ex != nil:
		name = ex.Metadata.Name
	case lab != nil:
		name = lab.Metadata.Name
	}
	s, err := r.Attach(ctx, name, b)
	if err != nil {
		return cannotRun(err)
	}
	current := s // Reset replaces it
	defer func() { _, _ = current.Close(context.WithoutCancel(ctx), true) }()
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	kubectl := []string{bin, "kubectl", "--name", g.name}
	if g.home != "" {
		kubectl = append(kubectl, "--home", g.home)
	}
	var reset func(context.Context) (*engine.Session, error)
	if booted && ex != nil {
		// The cluster is ui's own: Reset reboots it and sets the exercise
		// up again, as exercise start does; the terminals keep working
		// (the cluster keeps its name, so its KUBECONFIG).
		reset = func(rctx context.Context) (*engine.Session, error) {
			_, _ = current.Close(context.WithoutCancel(rctx), true)
			if err := b.Down(rctx); err != nil {
				return nil, fmt.Errorf("reset: remove the cluster: %w", err)
			}
			if err := startExercise(rctx, g, f.backend, &f.kube, ex); err != nil {
				return nil, fmt.Errorf("reset: %w", err)
			}
			nb, _, err := openExercise(rctx, g)
			if err != nil {
				return nil, fmt.Errorf("reset: %w", err)
			}
			ns, err := r.Attach(rctx, name, nb)
			if err != nil {
				return nil, fmt.Errorf("reset: %w", err)
			}
			b, current = nb, ns
			return ns, nil
		}
	}
	o := ui.Options{Exercise: ex, Session: s, Patience: f.patience, Words: g.words, Reset: reset,
		Shell: &ui.Shell{Env: []string{"KUBECONFIG=" + b.Access().Kubeconfig}, Kubectl: kubectl}}
	if lab != nil {
		o.Lab = &ui.LabRun{Lab: lab, Steps: s.Steps(lab)}
	}
	srv, err := ui.New(o)
	if err != nil {
		return err
	}
	what := "cluster " + strconv.Quote(g.name)
	switch {
	case ex != nil:
		what = "exercise " + ex.Metadata.Name + " on " + what
	case lab != nil:
		what = "lab " + lab.Metadata.Name + " on " + what
	}
	return serveView(ctx, g, f, srv, what, fmt.Sprintf("Work with kubectl (export KUBECONFIG=%s); Ctrl-C stops ui%s.", b.Access().Kubeconfig,
		map[bool]string{true: " and removes the cluster", false: ""}[booted]))
}

// openBrowser opens url where a desktop session can show it; elsewhere
// the printed URL is the way in.
func openBrowser(url string) {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	if p, err := exec.LookPath("xdg-open"); err == nil {
		cmd := exec.Command(p, url)
		if cmd.Start() == nil {
			go func() { _ = cmd.Wait() }()
		}
	}
}
