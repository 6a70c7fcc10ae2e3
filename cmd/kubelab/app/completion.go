package app

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/cluster"
)

// Shell completion of values (cobra's `kubelab completion bash|zsh|fish`
// completes commands and flags; these complete what goes in them): the
// backends, the clusters of the home, the faults' actions and targets of
// the named cluster, and lab, feature and report files.

// completeWords completes from a fixed list.
func completeWords(words ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFiles completes file names with these extensions (and
// directories).
func completeFiles(exts ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// completeClusters completes the names of the home's clusters.
func completeClusters(g *globals) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		list, err := listClusters(g)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, c := range list {
			if strings.HasPrefix(c.Name, prefix) {
				out = append(out, cobra.CompletionWithDesc(c.Name, c.Backend))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFault completes `fault ACTION TARGET`: the actions, then the
// leader targets and the components of the named cluster (completeTargets).
func completeFault(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			var out []cobra.Completion
			for _, a := range cluster.Actions {
				out = append(out, string(a))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case 1:
			out := []cobra.Completion{cluster.TargetEtcdLeader, cluster.TargetEtcdFollower, cluster.TargetSchedulerLeader, cluster.TargetControllerLeader}
			c, err := openCluster(cmd.Context(), g)
			if err != nil {
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			// A stacked topology's control-plane nodes: each hits its
			// components at once.
			nodes := c.Topology().ControlPlaneNodes()
			for _, n := range slices.Sorted(maps.Keys(nodes)) {
				out = append(out, cobra.CompletionWithDesc(n, strings.Join(nodes[n], ", ")))
			}
			return append(out, targetsOf(cmd.Context(), c)...), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeLogs completes `logs COMPONENT` (completeTargets).
func completeLogs(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeTargets(cmd, g), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTargets lists the components and nodes of the named cluster
// and, on real nodes, the daemons inside each node.
func completeTargets(cmd *cobra.Command, g *globals) []cobra.Completion {
	c, err := openCluster(cmd.Context(), g)
	if err != nil {
		return nil
	}
	return targetsOf(cmd.Context(), c)
}

// targetsOf lists the components and nodes of c and, on real nodes, the
// daemons inside each node.
func targetsOf(ctx context.Context, c *cluster.Cluster) []cobra.Completion {
	comps, err := c.Components(ctx)
	if err != nil {
		return nil
	}
	realNodes := cluster.CapabilitiesOf(c.Backend)[cluster.CapNodeInternals]
	var out []cobra.Completion
	for _, k := range comps {
		out = append(out, cobra.CompletionWithDesc(k.Name, string(k.Role)))
		if k.Role == cluster.RoleNode && realNodes {
			for _, d := range cluster.NodeDaemons {
				out = append(out, cobra.CompletionWithDesc(k.Name+"/"+d, d+" inside "+k.Name))
			}
		}
	}
	return out
}

// registerCompletions wires the value completions into the command tree.
func registerCompletions(g *globals, root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("name", completeClusters(g))
	_ = root.RegisterFlagCompletionFunc("home", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	walk(root, func(c *cobra.Command) {
		if c.Flags().Lookup("backend") != nil {
			_ = c.RegisterFlagCompletionFunc("backend", completeWords(backendEmbedded, backendDocker, backendKubeconfig))
		}
		for flag, exts := range map[string][]string{"html": {"html"}, "json": {"json"}, "junit": {"xml"}} {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, completeFiles(exts...))
			}
		}
		switch c.CommandPath() {
		case "kubelab fault":
			c.ValidArgsFunction = completeFault(g)
		case "kubelab logs":
			c.ValidArgsFunction = completeLogs(g)
		case "kubelab run", "kubelab validate":
			c.ValidArgsFunction = completeFiles("yaml", "yml")
		case "kubelab drill":
			c.ValidArgsFunction = completeFiles("feature")
		case "kubelab report":
			c.ValidArgsFunction = completeFiles("json")
		}
	})
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}
