package app

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
)

// `kubelab logs` prints a component's own output: what to read when a
// lab's step fails after a fault, or to watch a leader election happen.
func newLogsCommand(g *globals) *cobra.Command {
	var o cluster.LogOptions
	cmd := &cobra.Command{
		Use:   "logs [COMPONENT]",
		Short: "Print a component's own output (--name): klog lines of etcd, an apiserver, a scheduler... across its restarts",
		Long: `Logs prints what a component of the cluster (--name) wrote on its
standard output and error: etcd's Raft messages, an apiserver's start and
its post-start hooks, a scheduler's or controller-manager's leader
election, the reason a component exited. The embedded backend keeps one
log per component, to which every start of it appends (a line
"---- kubelab: starting" begins each); the docker backend reads the
container's log, and NODE/DAEMON the log of a daemon inside a real node
(worker-1/kubelet, worker-1/containerd, worker-1/kube-proxy). Nodes
simulated by kwok have no log of their own: kwok's is theirs.

With no COMPONENT it lists the components.`,
		Example: `  kubelab logs
  kubelab logs kube-scheduler-1 --tail 20
  kubelab logs etcd-2 -f
  kubelab logs worker-1/containerd --tail 50   # docker backend`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := openCluster(cmd.Context(), g)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				cs, err := c.Components(cmd.Context())
				if err != nil {
					return cannotRun(err)
				}
				for _, x := range cs {
					fmt.Fprintln(g.streams.Out, x.Name)
				}
				return nil
			}
			rc, err := c.ComponentLog(cmd.Context(), args[0], o)
			if err != nil {
				if errors.Is(err, cluster.ErrNoComponent) {
					return invalid(err)
				}
				return cannotRun(err)
			}
			defer rc.Close()
			if _, err := io.Copy(g.streams.Out, rc); err != nil && cmd.Context().Err() == nil {
				return cannotRun(fmt.Errorf("logs of %s: %w", args[0], err))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Tail, "tail", 0, "print only the last N lines (0: all)")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "go on printing what it writes, until Ctrl-C")
	return cmd
}
