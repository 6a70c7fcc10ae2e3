package app

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
)

// `kubelab metrics` prints what a control-plane component serves at
// /metrics, to find the names metric() takes.
func newMetricsCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "metrics [COMPONENT [FILTER]]",
		Short: "Print a control-plane component's own Prometheus metrics (--name): the names metric() reads in a lab",
		Long: `Metrics prints what a control-plane component of the cluster (--name)
serves at /metrics, read as metric() reads it in a lab: an etcd member on
its client URL with etcd's certificate; an apiserver, a scheduler or a
controller-manager on its own secure port with the admin's.

With no COMPONENT it lists the components that serve metrics. With a
COMPONENT it lists its metrics, one line each with its type and help;
with a FILTER too, the metrics whose name contains FILTER, with every
series and value.`,
		Example: `  kubelab metrics
  kubelab metrics etcd-1
  kubelab metrics etcd-1 leader_changes
  kubelab metrics kube-scheduler-1 pending_pods`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := cluster.CheckCapabilities(b, map[cluster.Capability]string{cluster.CapComponentMetrics: "kubelab metrics"}); err != nil {
				return cannotRun(err)
			}
			c := cluster.New(b, nil)
			if len(args) == 0 {
				for _, n := range c.MetricsServers() {
					fmt.Fprintln(g.streams.Out, n)
				}
				return nil
			}
			text, err := c.Metrics(cmd.Context(), args[0])
			if err != nil {
				return cannotRun(err)
			}
			filter := ""
			if len(args) == 2 {
				filter = args[1]
			}
			out := metricsLines(string(text), filter)
			if len(out) == 0 {
				return cannotRun(fmt.Errorf("%s serves no metric whose name contains %q", args[0], filter))
			}
			_, err = fmt.Fprintln(g.streams.Out, strings.Join(out, "\n"))
			return err
		},
	}
}

// metricsLines picks from Prometheus text: with no filter, one line per
// metric (name, type, help); with one, every line of the metrics whose
// name contains it.
func metricsLines(text, filter string) []string {
	types := map[string]string{}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
		}
	}
	for _, l := range strings.Split(text, "\n") {
		name := metricName(l)
		switch {
		case name == "":
		case filter == "":
			if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
				_, help, _ := strings.Cut(rest, " ")
				out = append(out, fmt.Sprintf("%s (%s) %s", name, types[name], help))
			}
		case strings.Contains(name, filter) && !strings.HasPrefix(l, "# TYPE "):
			out = append(out, l)
		}
	}
	return out
}

// metricName is the metric a line of Prometheus text is about: the name
// after "# HELP " or "# TYPE ", or before a sample's labels or value.
func metricName(line string) string {
	for _, p := range []string{"# HELP ", "# TYPE "} {
		if rest, ok := strings.CutPrefix(line, p); ok {
			name, _, _ := strings.Cut(rest, " ")
			return name
		}
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return ""
	}
	return strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]
}
