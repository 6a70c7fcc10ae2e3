package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/embedded"
)

// Status is what `kubelab status -o json|yaml` prints.
type Status struct {
	Cluster    string                `json:"cluster"`
	Backend    string                `json:"backend"`
	Kubeconfig string                `json:"kubeconfig"`
	Components []cluster.Component   `json:"components"`
	Etcd       []cluster.EtcdMember  `json:"etcd"`
	Leases     []cluster.LeaseHolder `json:"leases"`
	// LeaseErrors says why a lease could not be read, by lease.
	LeaseErrors map[string]string `json:"leaseErrors,omitempty"`
	// ControlPlaneNodes are a stacked topology's control-plane nodes,
	// each the components it runs (none in an external topology).
	ControlPlaneNodes map[string][]string `json:"controlPlaneNodes,omitempty"`
}

func newStatusCommand(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show components, leaders and the etcd Raft table",
		Example: "  kubelab status\n  kubelab status --name other -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return err
			}
			st, err := collectStatus(cmd.Context(), b)
			if err != nil {
				return err
			}
			return printAs(g.streams.Out, output, st, st.write)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func checkOutput(format string) error {
	switch format {
	case "", "table", "wide", "json", "yaml":
		return nil
	}
	return invalidf("--output %q: want json or yaml", format)
}

func collectStatus(ctx context.Context, b cluster.Backend) (*Status, error) {
	c := cluster.New(b, nil)
	comps, err := c.Components(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := c.EtcdStatus(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{Cluster: b.Topology().Name, Backend: b.Name(), Kubeconfig: b.Access().Kubeconfig,
		Components: comps, Etcd: ms, Leases: []cluster.LeaseHolder{}, ControlPlaneNodes: b.Topology().ControlPlaneNodes()}
	for _, key := range []string{cluster.LeaseScheduler, cluster.LeaseControllerManager} {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		h, err := c.Lease(lctx, key)
		cancel()
		if err != nil {
			if st.LeaseErrors == nil {
				st.LeaseErrors = map[string]string{}
			}
			st.LeaseErrors[key] = err.Error()
			continue
		}
		st.Leases = append(st.Leases, h)
	}
	return st, nil
}

func (st *Status) write(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "COMPONENT\tROLE\tSTATE\tPID\tENDPOINT\n")
	for _, comp := range st.Components {
		pid := "-"
		if comp.PID > 0 {
			pid = fmt.Sprint(comp.PID)
		}
		state := string(comp.State)
		if comp.Exit != "" {
			state += " (" + comp.Exit + ")" // how it ended: kubelab logs NAME says why
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", comp.Name, comp.Role, state, pid, dash(comp.Endpoint))
	}
	w.Flush()

	if len(st.ControlPlaneNodes) > 0 {
		st.writeNodes(out)
	}

	fmt.Fprintln(out, "\nETCD RAFT")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "MEMBER\tID\tROLE\tTERM\tRAFT INDEX\tAPPLIED\tDB SIZE\tERROR\n")
	for _, m := range st.Etcd {
		role := "follower"
		switch {
		case !m.Reachable:
			role = "unreachable"
		case m.IsLeader:
			role = "LEADER"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", m.Name, dash(m.ID), role, m.Term, m.RaftIndex, m.AppliedIndex, m.DBSize, dash(firstLine(m.Error)))
	}
	w.Flush()

	fmt.Fprintln(out, "\nLEADER LEASES")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "LEASE\tHOLDER\tTRANSITIONS\tRENEWED\n")
	for _, h := range st.Leases {
		ago := "-"
		if !h.RenewTime.IsZero() {
			ago = time.Since(h.RenewTime).Round(100*time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", h.Lease, dash(h.Component), h.Transitions, ago)
	}
	keys := make([]string, 0, len(st.LeaseErrors))
	for k := range st.LeaseErrors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t(error: %s)\t\t\n", k, firstLine(st.LeaseErrors[k]))
	}
	return w.Flush()
}

// writeNodes lists a stacked topology's control-plane nodes: what each
// runs and in what state, what a fault on the node (kubelab fault kill
// control-plane-2) hits at once.
func (st *Status) writeNodes(out io.Writer) {
	states := map[string]string{}
	for _, c := range st.Components {
		states[c.Name] = string(c.State)
	}
	fmt.Fprintln(out, "\nCONTROL-PLANE NODES (stacked etcd: each apiserver talks to its own node's member)")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "NODE\tCOMPONENTS\n")
	for _, n := range slices.Sorted(maps.Keys(st.ControlPlaneNodes)) {
		var parts []string
		for _, c := range st.ControlPlaneNodes[n] {
			parts = append(parts, c+" ("+dash(states[c])+")")
		}
		fmt.Fprintf(w, "%s\t%s\n", n, strings.Join(parts, ", "))
	}
	w.Flush()
}

// ClusterInfo is one row of `kubelab get clusters`.
type ClusterInfo struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
}

func newGetCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List resources of kubelab itself: clusters",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return invalidf("kubelab get needs a resource: clusters")
			}
			return invalidf("kubelab get lists kubelab's own resources (clusters), not %q; for the cluster's objects: kubelab kubectl get %s", args[0], strings.Join(args, " "))
		},
	}
	var output string
	clusters := &cobra.Command{
		Use:     "clusters",
		Aliases: []string{"cluster"},
		Short:   "List the clusters of this home (--home), on every backend",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			list, err := listClusters(g)
			if err != nil {
				return err
			}
			return printAs(g.streams.Out, output, list, func(w io.Writer) error {
				if len(list) == 0 {
					_, err := fmt.Fprintln(g.streams.Err, "No clusters.")
					return err
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "NAME\tBACKEND\n")
				for _, c := range list {
					fmt.Fprintf(tw, "%s\t%s\n", c.Name, c.Backend)
				}
				return tw.Flush()
			})
		},
	}
	addOutputFlag(clusters, &output)
	cmd.AddCommand(clusters)
	return cmd
}

// listClusters lists the embedded clusters of the home and the docker
// clusters whose state lives there, sorted by name.
func listClusters(g *globals) ([]ClusterInfo, error) {
	list := []ClusterInfo{}
	names, err := embedded.Home(g.home).Clusters()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, n := range names {
		list = append(list, ClusterInfo{Name: n, Backend: backendEmbedded})
	}
	ents, err := os.ReadDir(g.dockerDir(""))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() {
			list = append(list, ClusterInfo{Name: e.Name(), Backend: backendDocker})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}
