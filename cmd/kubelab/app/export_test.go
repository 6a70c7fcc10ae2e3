package app

import (
	"context"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
)

// Hooks replace the backends for the tests of the commands' logic on fake
// clusters: Backend makes every cluster a command would make, Open finds
// every running cluster it attaches to, Observe watches every cluster a
// runner runs on.
type Hooks struct {
	Backend func(kind string, t cluster.Topology) (cluster.Backend, error)
	Open    func(ctx context.Context, name string) (cluster.Backend, error)
	Observe func(ctx context.Context, c *cluster.Cluster, start time.Time) (engine.Observer, error)
}

// RunWith is Run with the backends replaced.
func RunWith(ctx context.Context, s Streams, args []string, h Hooks) error {
	return runWith(ctx, s, args, hooks{backend: h.Backend, open: h.Open, observe: h.Observe})
}

// MetricsLines is metricsLines, for its test.
var MetricsLines = metricsLines
