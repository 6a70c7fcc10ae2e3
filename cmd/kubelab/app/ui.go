package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/grade"
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
		Use:   "ui [EXERCISE]",
		Short: "A live exercise in the browser: the statement, the checks turning green as you work, hints, the final check",
		Long: `ui serves a page on 127.0.0.1 for the exercise running on the cluster
--name: its statement, and its checks re-evaluated whenever the cluster
changes (the same evaluation as kubelab check --watch), with hints on
demand and a Final check button. Work on the cluster with kubectl as
usual (the KUBECONFIG line of exercise start).

With EXERCISE, ui first starts it, as kubelab exercise start does, and
removes that cluster when you stop ui; without, it attaches to the
cluster --name (and the exercise it runs, if any) and leaves it as it
is. Every view shows the machinery, live: the etcd members and who
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
		Example: `  kubelab ui exercises/fix-service-selector
  kubelab exercise start exercises/fix-pending-pods --name mine && kubelab ui --name mine --no-browser`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g.interruptEndsNormally = true // Ctrl-C is how ui ends
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
	return serveUI(ctx, g, f, b, ex, booted)
}

// serveUI serves the view of cluster b (and of the exercise it runs, if
// any) until ctx ends; a cluster ui booted (booted) is removed then.
func serveUI(ctx context.Context, g *globals, f *uiFlags, b cluster.Backend, ex *grade.Exercise, booted bool) error {
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
	if ex != nil {
		name = ex.Metadata.Name
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
	srv, err := ui.New(ui.Options{Exercise: ex, Session: s, Patience: f.patience, Words: g.words, Reset: reset,
		Shell: &ui.Shell{Env: []string{"KUBECONFIG=" + b.Access().Kubeconfig}, Kubectl: kubectl}})
	if err != nil {
		return err
	}
	ln, err := srv.Listen(f.port)
	if err != nil {
		return invalid(err)
	}
	what := "cluster " + strconv.Quote(g.name)
	if ex != nil {
		what = "exercise " + ex.Metadata.Name + " on " + what
	}
	fmt.Fprintf(g.streams.Out, "kubelab ui for %s: %s\n", what, srv.URL())
	fmt.Fprintf(g.streams.Err, "Work with kubectl (export KUBECONFIG=%s); Ctrl-C stops ui%s.\n", b.Access().Kubeconfig,
		map[bool]string{true: " and removes the cluster", false: ""}[booted])
	if !f.noBrowser {
		openBrowser(srv.URL())
	}
	if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
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
