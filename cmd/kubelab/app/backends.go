package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"kubelab.dev/kubelab/internal/proc"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/engine"
)

// Backend names accepted by --backend.
const (
	backendEmbedded   = backends.Embedded
	backendDocker     = backends.Docker
	backendKubeconfig = backends.Kubeconfig
)

// kubeFlags choose an existing cluster for --backend kubeconfig.
type kubeFlags struct {
	kubeconfig string
	context    string
}

func (k *kubeFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&k.kubeconfig, "kubeconfig", "", "with --backend kubeconfig: the kubeconfig of an existing cluster to run on (each run gets a namespace of its own)")
	fl.StringVar(&k.context, "context", "", "with --backend kubeconfig: the context of --kubeconfig to use (default its current context)")
}

// hooks replace how commands reach clusters; only this package's tests set
// them (a fake backend and view, so the commands' logic runs without a
// cluster). The zero value is the real backends.
type hooks struct {
	// backend, when set, makes every backend a command would make.
	backend func(kind string, t cluster.Topology) (cluster.Backend, error)
	// open, when set, finds every running cluster a command attaches to.
	open func(ctx context.Context, name string) (cluster.Backend, error)
	// observe, when set, is every runner's Observe.
	observe func(ctx context.Context, c *cluster.Cluster, start time.Time) (engine.Observer, error)
}

// backendOpts are the backend options of this home for clusters of bin
// (ephemeral ones belong to this process and are swept once it is gone);
// kf is nil for commands without --kubeconfig.
func (g *globals) backendOpts(bin string, ephemeral bool, kf *kubeFlags) backends.Options {
	o := backends.Options{Home: g.home, Binary: bin, Ephemeral: ephemeral, Fresh: g.fresh, OwnerStart: selfStart()}
	if kf != nil {
		o.Kubeconfig, o.Context = kf.kubeconfig, kf.context
	}
	if g.verbose {
		o.Log = slog.New(slog.NewTextHandler(g.streams.Err, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

// newBackend makes a backend of the given kind for topology t.
func newBackend(g *globals, kind string, t cluster.Topology, ephemeral bool, kf *kubeFlags) (cluster.Backend, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return newBackendWith(g, kind, bin, t, ephemeral, kf)
}

func newBackendWith(g *globals, kind, bin string, t cluster.Topology, ephemeral bool, kf *kubeFlags) (cluster.Backend, error) {
	if g.hooks.backend != nil {
		if err := backends.Check(kind, g.backendOpts(bin, ephemeral, kf)); err != nil {
			return nil, err
		}
		return g.hooks.backend(kind, t)
	}
	return backends.Make(kind, t, g.backendOpts(bin, ephemeral, kf))
}

// backendFor returns a factory of ephemeral clusters (labs, drills,
// grading) on the named backend, checking the name now. kf is nil for
// commands without --kubeconfig.
func backendFor(g *globals, kind, bin string, kf *kubeFlags) (engine.NewBackend, error) {
	if err := backends.Check(kind, g.backendOpts(bin, true, kf)); err != nil {
		return nil, err
	}
	return func(t cluster.Topology) (cluster.Backend, error) { return newBackendWith(g, kind, bin, t, true, kf) }, nil
}

// keptOnFailure makes the clusters of backend outlive this process when
// keep is set (--keep-on-failure): an ephemeral cluster dies with the
// process that booted it (its embedded processes with their parent, its
// docker containers by the reaper), so a kept one must not be
// ephemeral. The runner still removes every cluster it does not keep. A
// kubeconfig cluster is not kubelab's to keep or remove.
func keptOnFailure(g *globals, kind, bin string, backend engine.NewBackend, keep bool) engine.NewBackend {
	if !keep || kind == backendKubeconfig {
		return backend
	}
	return func(t cluster.Topology) (cluster.Backend, error) { return newBackendWith(g, kind, bin, t, false, nil) }
}

// openBackend attaches to a running cluster by name, on whichever backend
// has it.
func openBackend(ctx context.Context, g *globals) (cluster.Backend, error) {
	if g.hooks.open != nil {
		return g.hooks.open(ctx, g.name)
	}
	b, err := backends.Open(ctx, g.name, g.backendOpts("", false, nil))
	if errors.Is(err, backends.ErrNotFound) {
		return nil, invalidf("%w (start one with: kubelab up --name %s)", err, g.name)
	}
	return b, err
}

// nameFree refuses to make a cluster under a name that a cluster of any
// backend already has: commands find a cluster by its name alone, and a
// boot that fails removes what it made, which under a taken name was
// the other cluster's (its state directory, on the same backend).
func nameFree(ctx context.Context, g *globals) error {
	b, err := openBackend(ctx, g)
	if err != nil {
		return nil // none (or none that answers: the boot will say)
	}
	return invalidf("cluster %q: %w on the %s backend (kubelab down --name %s, or another --name)", g.name, cluster.ErrExists, b.Name(), g.name)
}

// dockerUp reports quickly whether a Docker engine answers.
func dockerUp(ctx context.Context) bool { return backends.DockerUp(ctx) }

func selfStart() string { return proc.StartTime(os.Getpid()) }

func newImagesCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Container images of the docker backend"}
	cmd.AddCommand(&cobra.Command{
		Use:   "load IMAGE.tar|IMAGE...",
		Short: "Put images into every worker's containerd (a docker save tarball, or an image of the host's Docker), as kind load does",
		Example: `  kubelab images load nginx:1.27 --name lab
  kubelab images load ./my-app.tar`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return invalid(err)
			}
			d, ok := b.(*docker.Backend)
			if !ok {
				return invalidf("images load: cluster %s runs on the %s backend, whose nodes are simulated and run no images; use --backend docker", g.name, b.Name())
			}
			return d.LoadImages(cmd.Context(), args, func(s string) { fmt.Fprintln(g.streams.Err, s) })
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "build",
		Short: "Build every image the docker backend needs, and the grader image of `kubelab grade --on` (cached by content hash; no registry needed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			start := time.Now()
			imgs, err := docker.Build(cmd.Context(), bin, func(s string) {
				fmt.Fprintf(g.streams.Err, "  %6.1fs  %s\n", time.Since(start).Seconds(), s)
			})
			if err != nil {
				return err
			}
			grader, err := docker.BuildGrader(cmd.Context(), bin, func(s string) {
				fmt.Fprintf(g.streams.Err, "  %6.1fs  %s\n", time.Since(start).Seconds(), s)
			})
			if err != nil {
				return err
			}
			for _, ref := range []string{imgs.Node, imgs.Kubelab, imgs.Pause, imgs.HTTP, grader} {
				fmt.Fprintln(g.streams.Out, ref)
			}
			return nil
		},
	})
	return cmd
}
