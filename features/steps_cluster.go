package features

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster"
)

// clusterSteps are the step library's phrases of the group Cluster.
func clusterSteps() []Step {
	return []Step{
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster",
			Doc:      "A cluster with one of each component (1 etcd member, 1 apiserver, 1 scheduler, 1 controller-manager, 1 worker). Clusters boot at the first step that needs them, so timings may follow.",
			Examples: []string{"Given a lab cluster"},
			re:       `^a lab cluster$`,
			fn: func(ctx context.Context) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(*cluster.Topology) error { return nil })
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster with COUNTS",
			Doc:      "COUNTS lists components in any order and subset: N etcd members, N apiservers, N schedulers, N controller-managers, N workers. Omitted counts are 1.",
			Examples: []string{"Given a lab cluster with 3 etcd members, 2 schedulers and 3 workers", "Given a lab cluster with 2 apiservers and 2 workers", "Given a lab cluster with 3 etcd members"},
			re:       `^a lab cluster with (.+)$`,
			fn: func(ctx context.Context, counts string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error { return parseCounts(counts, t) })
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster:",
			Doc:       "The docstring is the topology in YAML, with the fields of a lab file's spec.cluster (etcd, apiservers, schedulers, controllerManagers, workers, nodes, timings). Unknown fields are errors.",
			Examples:  []string{"Given a lab cluster:"},
			DocString: "etcd: 3\nworkers: 2\ntimings: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}",
			re:        `^a lab cluster:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error {
					if err := yaml.UnmarshalStrict([]byte(doc.Content), t); err != nil {
						return fmt.Errorf("topology docstring: %w", err)
					}
					return nil
				})
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "TIMING DURATION[, TIMING DURATION and TIMING DURATION]",
			Doc: "Shortens timings before the cluster boots. TIMING is one of: lease duration, renew deadline, retry period (leader election of schedulers and controller-managers), " +
				"node monitor grace period, node lease duration, toleration seconds (default tolerations for not-ready and unreachable nodes), etcd compaction interval.",
			Examples: []string{"Given lease duration 4s, renew deadline 3s and retry period 1s", "Given node monitor grace period 8s and toleration seconds 10s", "Given etcd compaction interval 5s"},
			re:       timingPattern(),
			fn: func(ctx context.Context, timings string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error { return parseTimings(timings, &t.Timings) })
			},
		},
	}
}
