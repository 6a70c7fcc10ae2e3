package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/cluster/kubeconfig"
)

type upFlags struct {
	ui      bool
	backend string
	config  string
	topo    cluster.Topology
	lease   time.Duration
	grace   time.Duration
	observe bool
}

// countFlags maps the topology's count fields to their flags.
var countFlags = map[string]string{"etcd": "etcd", "apiservers": "apiservers", "schedulers": "schedulers",
	"controllerManagers": "controller-managers", "workers": "workers"}

func newUpCommand(g *globals) *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Boot a real cluster (etcd, apiservers behind a load balancer, schedulers, controller-managers, nodes)",
		Example: `  kubelab up --etcd 3 --apiservers 2 --schedulers 2 --controller-managers 2 --workers 3
  kubelab up --config cluster.yaml --name other
  kubelab up --stacked --etcd 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := f.topology(cmd, g)
			if err != nil {
				return invalid(err)
			}
			if err := up(cmd.Context(), g, f.backend, t); err != nil || !f.ui {
				return err
			}
			// --ui: the cluster's view in the browser, until Ctrl-C removes both.
			g.interruptEndsNormally = true
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return err
			}
			return serveUI(cmd.Context(), g, &uiFlags{patience: 2 * time.Second}, b, nil, nil, true)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.ui, "ui", false, "then serve the cluster's machinery and terminals in the browser (kubelab ui); Ctrl-C stops it and removes the cluster")
	fl.StringVar(&f.backend, "backend", backendEmbedded, "where components run: embedded (local processes, simulated nodes) or docker (containers, real kubelets)")
	fl.StringVar(&f.config, "config", "", "topology file (YAML, fields as in a lab's spec.cluster); flags given explicitly override it")
	fl.IntVar(&f.topo.Etcd, "etcd", 1, "etcd members (1, 3 or 5)")
	fl.IntVar(&f.topo.APIServers, "apiservers", 1, "kube-apiservers (1 to 5, behind an L4 load balancer)")
	fl.IntVar(&f.topo.Schedulers, "schedulers", 1, "kube-schedulers (1 to 5, leader-elected)")
	fl.IntVar(&f.topo.ControllerManagers, "controller-managers", 1, "kube-controller-managers (1 to 5, leader-elected)")
	fl.IntVar(&f.topo.Workers, "workers", 1, "worker nodes (1 to 4000 on embedded, 20 on docker)")
	fl.BoolVar(&f.topo.Stacked, "stacked", false, "kubeadm's stacked etcd topology: control-plane nodes control-plane-1..N (N = --etcd), each an etcd member, an apiserver that talks to it alone, a controller-manager and a scheduler; kubelab fault kill control-plane-2 takes all four")
	fl.DurationVar(&f.lease, "lease-duration", 0, "leader-election lease duration, at least 1s (renew 2/3, retry 1/4 of it); 0 = upstream 15s")
	fl.DurationVar(&f.grace, "node-grace", 0, "node monitor grace period, more than 1s; 0 = upstream default")
	fl.BoolVar(&f.observe, "observe", true, "record what the machinery does: the apiservers' audit log (audit(), trace()) and the scheduler's per-plugin decisions (scheduling()); --observe=false runs both as upstream ships them")
	return cmd
}

// topology is the topology asked for: the --config file, then the flags
// given explicitly, validated (an explicit 0 is an error, not a default).
func (f *upFlags) topology(cmd *cobra.Command, g *globals) (cluster.Topology, error) {
	var t cluster.Topology
	inFile := map[string]any{}
	if f.config != "" {
		b, err := os.ReadFile(f.config)
		if err != nil {
			return t, err
		}
		if err := yaml.UnmarshalStrict(b, &t); err != nil {
			return t, fmt.Errorf("%s: %w", f.config, err)
		}
		_ = yaml.Unmarshal(b, &inFile)
	}
	fl := cmd.Flags()
	for field, flag := range countFlags {
		if fl.Changed(flag) {
			n, _ := fl.GetInt(flag)
			switch field {
			case "etcd":
				t.Etcd = n
			case "apiservers":
				t.APIServers = n
			case "schedulers":
				t.Schedulers = n
			case "controllerManagers":
				t.ControllerManagers = n
			case "workers":
				t.Workers, t.Nodes = n, nil
			}
		}
	}
	if fl.Changed("stacked") {
		t.Stacked = f.topo.Stacked
	}
	if fl.Changed("name") || t.Name == "" {
		t.Name = g.name
	}
	if fl.Changed("lease-duration") {
		t.Timings.LeaseDuration.Duration = f.lease
		t.Timings.RenewDeadline.Duration = f.lease * 2 / 3
		t.Timings.RetryPeriod.Duration = f.lease / 4
	}
	if fl.Changed("node-grace") {
		t.Timings.NodeMonitorGracePeriod.Duration = f.grace
	}
	if fl.Changed("observe") {
		t.Audit, t.Scheduler.Record = &f.observe, &f.observe
	}
	explicit := func(field string) bool {
		_, ok := inFile[field]
		return ok || fl.Changed(countFlags[field])
	}
	if errs := t.ValidateExplicit(explicit); len(errs) > 0 {
		return t, fmt.Errorf("topology: %w", errors.Join(errs...))
	}
	return t, nil
}

func up(ctx context.Context, g *globals, backend string, t cluster.Topology) error {
	if err := nameFree(ctx, g); err != nil {
		return err
	}
	b, err := newBackend(g, backend, t, false, nil)
	if err != nil {
		return invalid(err)
	}
	if err := boot(ctx, g, b); err != nil {
		return err
	}
	// The commands that act on this cluster, whatever its name.
	n := g.nameFlag()
	fmt.Fprintf(g.streams.Err, "Try: kubelab kubectl%s get nodes; kubelab status%s; kubelab down%s\n", n, n, n)
	return nil
}

// boot brings b up, showing its progress, and prints its KUBECONFIG line.
func boot(ctx context.Context, g *globals, b cluster.Backend) error {
	t := b.Topology()
	w := g.streams.Err
	if k, ok := b.(*kubeconfig.Backend); ok {
		fmt.Fprintf(w, "Using the existing cluster of %s, in namespace %s\n", k.Source(), k.RunNamespace())
	} else {
		fmt.Fprintf(w, "Booting cluster %q: %d etcd, %d apiserver(s), %d scheduler(s), %d controller-manager(s), %d node(s)\n",
			t.Name, t.Etcd, t.APIServers, t.Schedulers, t.ControllerManagers, len(t.Nodes))
	}
	start := time.Now()
	err := b.Up(ctx, func(e cluster.Event) {
		fmt.Fprintf(w, "  %6.2fs  %-26s %s\n", e.Elapsed.Seconds(), e.Component, e.Message)
	})
	if err != nil {
		return cannotRun(fmt.Errorf("up %s: %w", t.Name, err))
	}
	fmt.Fprintf(w, "Cluster %q ready in %.2fs.\n", t.Name, time.Since(start).Seconds())
	fmt.Fprintf(g.streams.Out, "export KUBECONFIG=%s\n", b.Access().Kubeconfig)
	return nil
}

func newDownCommand(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove a cluster (processes, ports, files), or every cluster with --all",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home := embedded.Home(g.home)
			if all {
				names, err := home.RemoveAll(cmd.Context())
				for _, n := range names {
					fmt.Fprintf(g.streams.Err, "removed cluster %q\n", n)
				}
				err = errors.Join(err, downKubeconfigRuns(cmd.Context(), g))
				if dockerUp(cmd.Context()) {
					dnames, derr := docker.Sweep(cmd.Context(), g.home, true)
					for _, n := range dnames {
						fmt.Fprintf(g.streams.Err, "removed docker cluster %q\n", n)
					}
					err = errors.Join(err, derr, os.RemoveAll(filepath.Join(g.home, "docker")))
				}
				return err
			}
			b, err := openBackend(cmd.Context(), g)
			if errors.Is(err, backends.ErrNotFound) && g.hooks.open == nil && dockerUp(cmd.Context()) {
				// A docker cluster whose containers were removed by hand
				// leaves its network and state directory.
				found, lerr := docker.RemoveLeftovers(cmd.Context(), g.home, g.name, backends.DockerDir(g.home, g.name))
				if lerr != nil {
					return fmt.Errorf("down %s: %w", g.name, lerr)
				}
				if found {
					fmt.Fprintf(g.streams.Err, "removed what was left of docker cluster %q (its containers were gone)\n", g.name)
					return nil
				}
			}
			if err != nil {
				return err
			}
			if err := b.Down(cmd.Context()); err != nil {
				return fmt.Errorf("down %s: %w", g.name, err)
			}
			fmt.Fprintf(g.streams.Err, "removed cluster %q\n", g.name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every cluster and every orphaned process")
	return cmd
}

// downKubeconfigRuns removes what every recorded run on a cluster kubelab
// did not create made there (live exercises, runs killed before their
// cleanup).
func downKubeconfigRuns(ctx context.Context, g *globals) error {
	root := filepath.Join(g.home, "kubeconfig")
	names, err := kubeconfig.Runs(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		b, err := kubeconfig.Open(filepath.Join(root, n))
		if err == nil {
			err = b.Down(ctx)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s on %s: %w", n, root, err))
			continue
		}
		fmt.Fprintf(g.streams.Err, "removed run %q (its objects on the cluster of %s)\n", n, b.Source())
	}
	return errors.Join(errs...)
}

func newKubeconfigCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the path of the cluster's admin kubeconfig (for kubectl, k9s...)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return err
			}
			fmt.Fprintln(g.streams.Out, b.Access().Kubeconfig)
			return nil
		},
	}
}

func openCluster(ctx context.Context, g *globals) (*cluster.Cluster, error) {
	b, err := openBackend(ctx, g)
	if err != nil {
		return nil, err
	}
	return cluster.New(b, nil), nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func newFaultCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fault ACTION TARGET",
		Short: "Apply a fault or repair: kill|stop|start|restart|pause|resume a component, a node, etcd-leader, etcd-follower, scheduler-leader, controller-manager-leader, or a daemon inside a node (docker)",
		Example: `  kubelab fault kill etcd-leader
  kubelab fault kill worker-2          # the node stops heartbeating
  kubelab fault start worker-2
  kubelab fault kill worker-2/kubelet  # docker: the kubelet alone; its pods keep running
  kubelab fault start worker-2/kubelet`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := cluster.Action(args[0])
			valid := false
			for _, x := range cluster.Actions {
				valid = valid || x == a
			}
			if !valid {
				return invalidf("unknown action %q: want one of %v", args[0], cluster.Actions)
			}
			c, err := openCluster(cmd.Context(), g)
			if err != nil {
				return err
			}
			name, err := c.Do(cmd.Context(), args[1], a)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.streams.Err, "%s: %s\n", a, name)
			return nil
		},
	}
	return cmd
}

// newNodeCommand is `kubelab node exec NODE -- CMD...`: a command inside a
// real node of the cluster (--name), the way a script reaches one.
func newNodeCommand(g *globals) *cobra.Command {
	node := &cobra.Command{Use: "node", Short: "Act inside the cluster's real nodes (docker backend)"}
	node.AddCommand(&cobra.Command{
		Use:   "exec NODE -- COMMAND [ARG...]",
		Short: "Run a command inside a node of the cluster (--name): its iptables, crictl, ip, the kubelet's files",
		Long: `Run a command inside a node of a docker cluster and print its output
(standard output and error together). The exit code is 0 when the command
succeeded, 1 otherwise. It is what a lab's nodeExec operation runs; in a
script, prefer it to docker exec, as container names carry a hash.
Simulated (embedded) nodes have no inside: exec is refused there.`,
		Example: `  kubelab node exec worker-1 -- iptables -t nat -S KUBE-SERVICES
  kubelab --name lab2 node exec worker-2 -- crictl pods`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 || len(args) < 2 {
				return fmt.Errorf("want NODE -- COMMAND [ARG...], got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := openCluster(cmd.Context(), g)
			if err != nil {
				return err
			}
			out, err := c.NodeExec(cmd.Context(), args[0], args[1:]...)
			fmt.Fprint(g.streams.Out, out)
			if errors.Is(err, cluster.ErrNoNodeInternals) {
				return invalid(err)
			}
			return err
		},
	})
	return node
}
