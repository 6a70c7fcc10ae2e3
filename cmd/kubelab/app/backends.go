package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"kubelab.dev/kubelab/internal/proc"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/cluster/kubeconfig"
	"kubelab.dev/kubelab/engine"
)

// Backend names accepted by --backend.
const (
	backendEmbedded   = "embedded"
	backendDocker     = "docker"
	backendKubeconfig = "kubeconfig"
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

// check refuses a kubeconfig without an explicit --backend kubeconfig, and
// the reverse: kubelab never uses a cluster it did not create by accident
// (not even through $KUBECONFIG).
func (k *kubeFlags) check(kind string) error {
	switch {
	case kind == backendKubeconfig && k.kubeconfig == "":
		return errors.New("--backend kubeconfig needs --kubeconfig FILE (kubelab does not read $KUBECONFIG for this)")
	case kind != backendKubeconfig && (k.kubeconfig != "" || k.context != ""):
		return fmt.Errorf("--kubeconfig and --context choose a cluster kubelab did not create: say so with --backend kubeconfig (not %q)", kind)
	}
	return nil
}

func (g *globals) dockerDir(name string) string { return filepath.Join(g.home, "docker", name) }

// kubeconfigDir is the state directory of a run on a cluster kubelab did
// not create.
func (g *globals) kubeconfigDir(name string) string { return filepath.Join(g.home, "kubeconfig", name) }

// newKubeconfigBackend is a run named t.Name on the cluster of kf.
func newKubeconfigBackend(g *globals, t cluster.Topology, kf *kubeFlags) (*kubeconfig.Backend, error) {
	return kubeconfig.New(t, kubeconfig.Options{Kubeconfig: kf.kubeconfig, Context: kf.context, Dir: g.kubeconfigDir(t.Name)})
}

// newBackend makes a backend of the given kind for topology t. Ephemeral
// clusters (labs) belong to this process and are swept once it is gone.
func newBackend(g *globals, kind string, t cluster.Topology, ephemeral bool) (cluster.Backend, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return newBackendWith(g, kind, bin, t, ephemeral)
}

func newBackendWith(g *globals, kind, bin string, t cluster.Topology, ephemeral bool) (cluster.Backend, error) {
	t.Fresh = t.Fresh || g.fresh
	switch kind {
	case backendEmbedded, "":
		o := g.embeddedOpts(ephemeral)
		o.Binary = bin
		return embedded.New(t, o)
	case backendDocker:
		t = t.WithDefaults()
		return docker.New(t, docker.Options{Home: g.home, Dir: g.dockerDir(t.Name), Binary: bin, Ephemeral: ephemeral, OwnerStart: selfStart()})
	}
	return nil, fmt.Errorf("unknown backend %q (want %s or %s)", kind, backendEmbedded, backendDocker)
}

// backendFor returns a factory of ephemeral clusters (labs, drills,
// grading) on the named backend, checking the name now. kf is nil for
// commands without --kubeconfig.
func backendFor(g *globals, kind, bin string, kf *kubeFlags) (engine.NewBackend, error) {
	if kf == nil {
		kf = &kubeFlags{}
	}
	if err := kf.check(kind); err != nil {
		return nil, err
	}
	switch kind {
	case backendEmbedded, "", backendDocker:
	case backendKubeconfig:
		o := *kf
		return func(t cluster.Topology) (cluster.Backend, error) { return newKubeconfigBackend(g, t, &o) }, nil
	default:
		return nil, fmt.Errorf("unknown backend %q (want %s, %s or %s)", kind, backendEmbedded, backendDocker, backendKubeconfig)
	}
	return func(t cluster.Topology) (cluster.Backend, error) { return newBackendWith(g, kind, bin, t, true) }, nil
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
	return func(t cluster.Topology) (cluster.Backend, error) { return newBackendWith(g, kind, bin, t, false) }
}

// openBackend attaches to a running cluster by name, on whichever backend
// has it.
func openBackend(ctx context.Context, g *globals) (cluster.Backend, error) {
	b, err := embedded.Open(g.name, g.embeddedOpts(false))
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, embedded.ErrNotFound) {
		return nil, err
	}
	k, kerr := kubeconfig.Open(g.kubeconfigDir(g.name))
	if kerr == nil {
		return k, nil
	}
	if !errors.Is(kerr, kubeconfig.ErrNotFound) {
		return nil, kerr
	}
	if dockerUp(ctx) {
		d, derr := docker.Open(ctx, g.name, docker.Options{Home: g.home, Dir: g.dockerDir(g.name)})
		if derr == nil {
			return d, nil
		}
		if !errors.Is(derr, docker.ErrNotFound) {
			return nil, derr
		}
	}
	return nil, invalidf("%w (start one with: kubelab up --name %s)", err, g.name)
}

// dockerUp reports quickly whether a Docker engine answers.
func dockerUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return docker.Available(ctx) == nil
}

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
			for _, ref := range args {
				if err := d.LoadImage(cmd.Context(), ref, func(s string) { fmt.Fprintln(g.streams.Err, s) }); err != nil {
					return err
				}
			}
			return nil
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
