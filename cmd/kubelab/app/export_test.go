package app

import (
	"context"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
)

// RunWith is Run with the backends replaced, for the tests of the
// commands' logic on fake clusters: backend makes every cluster a command
// would make, open finds every running cluster it attaches to, observe
// watches every cluster a runner runs on.
func RunWith(ctx context.Context, s Streams, args []string,
	backend func(kind string, t cluster.Topology) (cluster.Backend, error),
	open func(ctx context.Context, name string) (cluster.Backend, error),
	observe func(ctx context.Context, c *cluster.Cluster, start time.Time) (engine.Observer, error),
) error {
	return runWith(ctx, s, args, hooks{backend: backend, open: open, observe: observe})
}
