package app

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/bench"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
)

func newBenchCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure clusters on this machine: time to usable, memory, scale (prints tables)"}
	cmd.AddCommand(newBenchUpCommand(g), newBenchScaleCommand(g))
	return cmd
}

// besides adds to seen what else of kubelab's runs on this machine: the
// clusters, embedded or docker, of any home, whose load would be in a
// bench's figures, each under a key of its own (a cluster seen twice is
// described as last seen).
func besides(ctx context.Context, seen map[string]string) map[string]string {
	if seen == nil {
		seen = map[string]string{}
	}
	rs := embedded.Running()
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if drs, err := docker.Running(dctx); err == nil { // no engine: no docker cluster runs
		rs = append(rs, drs...)
	}
	for _, r := range rs {
		seen[r.Backend+" "+r.Where+" "+r.Name] = r.String()
	}
	return seen
}

// sayBesides writes to w that figures were, or are about to be, taken
// beside others (from besides): on the progress stream before a bench,
// and under its tables after it, so that a copied table says so too.
func sayBesides(w io.Writer, others map[string]string) {
	if len(others) == 0 {
		return
	}
	var list []string
	for _, k := range slices.Sorted(maps.Keys(others)) {
		list = append(list, others[k])
	}
	fmt.Fprintf(w, "bench: measured beside other kubelab clusters, whose load is in these figures: %s (kubelab down them for figures of this machine alone)\n",
		strings.Join(list, "; "))
}

// benchBackends makes the ephemeral clusters a bench boots.
func benchBackends(g *globals) (bench.NewBackend, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return func(kind string, t cluster.Topology) (cluster.Backend, error) {
		return newBackendWith(g, kind, bin, t, true, nil)
	}, nil
}

func newBenchUpCommand(g *globals) *cobra.Command {
	var f struct {
		backends []string
		runs     int
		seed     []bool
		observe  []bool
	}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Boot the minimal and HA topologies N times each: seconds to usable and PSS (min / median / max)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.runs < 1 {
				return invalidf("--runs: want at least 1, got %d", f.runs)
			}
			for _, b := range f.backends {
				if b != backendEmbedded && b != backendDocker {
					return invalidf("--backend %q: want %s or %s", b, backendEmbedded, backendDocker)
				}
			}
			nb, err := benchBackends(g)
			if err != nil {
				return err
			}
			others := besides(cmd.Context(), nil)
			sayBesides(g.streams.Err, others)
			rows, err := bench.Up(cmd.Context(), nb, bench.Cases(f.backends, f.seed, f.observe), f.runs, func(s string) { fmt.Fprintln(g.streams.Err, s) })
			if werr := bench.WriteUp(g.streams.Out, rows); werr != nil && err == nil {
				err = werr
			}
			sayBesides(g.streams.Out, besides(cmd.Context(), others))
			return err
		},
	}
	cmd.Flags().StringSliceVar(&f.backends, "backend", []string{backendEmbedded}, "backends to measure (embedded, docker; repeat or comma-separate)")
	cmd.Flags().IntVar(&f.runs, "runs", 3, "boots of each topology")
	cmd.Flags().BoolSliceVar(&f.seed, "seed", []bool{true}, "start from the seed (true), boot fresh (false), or both (false,true) for before and after")
	cmd.Flags().BoolSliceVar(&f.observe, "observe", []bool{false}, "run the audit log and the scheduler's recording (true), as a lab that reads them does, or not (false); false,true measures both")
	return cmd
}

func newBenchScaleCommand(g *globals) *cobra.Command {
	var f struct {
		nodes, pods []int
		record      []bool
		audit       []bool
		observe     []bool
		heartbeat   []int
	}
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Boot N simulated nodes, run M pods: nodes Ready, pods Running, pods/s, peak PSS",
		Example: `  kubelab bench scale --nodes 100,1000 --pods 1000,10000
  (pairs: 100 nodes with 1,000 pods, then 1,000 nodes with 10,000 pods)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, hb := range f.heartbeat {
				if hb < 1 || hb > 20 {
					return invalidf("--heartbeat %d: want a factor from 1 to 20", hb)
				}
			}
			if len(f.nodes) != len(f.pods) {
				return invalidf("--nodes and --pods: want as many values each, got %d and %d", len(f.nodes), len(f.pods))
			}
			for i := range f.nodes {
				if f.nodes[i] < 1 || f.nodes[i] > cluster.MaxNodes || f.pods[i] < 0 || f.pods[i] > 110*f.nodes[i] {
					return invalidf("--nodes %d --pods %d: want 1 to %d nodes and at most 110 pods a node", f.nodes[i], f.pods[i], cluster.MaxNodes)
				}
			}
			nb, err := benchBackends(g)
			if err != nil {
				return err
			}
			others := besides(cmd.Context(), nil)
			sayBesides(g.streams.Err, others)
			defer func() { sayBesides(g.streams.Out, besides(cmd.Context(), others)) }()
			var rs []bench.ScaleResult
			for i := range f.nodes {
				for _, hb := range f.heartbeat {
					for _, o := range observations(cmd, f.observe, f.audit, f.record) {
						spec := bench.ScaleSpec{Nodes: f.nodes[i], Pods: f.pods[i], Record: o.record, Audit: o.audit, Heartbeat: hb}
						r, err := bench.Scale(cmd.Context(), nb, backendEmbedded, spec, func(s string) { fmt.Fprintln(g.streams.Err, s) })
						if err != nil {
							return err
						}
						rs = append(rs, r)
					}
				}
			}
			return bench.WriteScale(g.streams.Out, rs)
		},
	}
	cmd.Flags().IntSliceVar(&f.nodes, "nodes", []int{100}, "simulated nodes (embedded backend)")
	cmd.Flags().IntSliceVar(&f.pods, "pods", []int{1000}, "pods of one Deployment")
	cmd.Flags().BoolSliceVar(&f.observe, "observe", []bool{false}, "observation on (the audit log and the scheduler's recording, as for a lab that reads them), off, or both: --observe=false,true")
	cmd.Flags().BoolSliceVar(&f.audit, "audit", []bool{false}, "apiservers write their audit logs (true, false, or both: --audit=false,true); with --record, instead of --observe")
	cmd.Flags().BoolSliceVar(&f.record, "record", []bool{false}, "schedulers record their decisions (true, false, or both: --record=false,true to measure what recording costs); with --audit, instead of --observe")
	cmd.Flags().IntSliceVar(&f.heartbeat, "heartbeat", []int{5}, "multiply the simulated nodes' heartbeat timings (Lease 40 s, grace 50 s) by this factor, as kwokctl's heartbeatFactor (default 5) does; 1 keeps a kubelet's and also measures a node taken down until NotReady; 1,5 measures both")
	return cmd
}

type observation struct{ audit, record bool }

// observations are the settings bench scale measures: --observe's (both
// or neither), unless --audit or --record was given (each combination).
func observations(cmd *cobra.Command, observe, audit, record []bool) []observation {
	var out []observation
	if !cmd.Flags().Changed("audit") && !cmd.Flags().Changed("record") {
		for _, o := range observe {
			out = append(out, observation{o, o})
		}
		return out
	}
	for _, a := range audit {
		for _, r := range record {
			out = append(out, observation{a, r})
		}
	}
	return out
}
