package engine

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// SideBySide is how kubelab runs many things at once (labs with
// --parallel, a batch of gradings): run(i) for every i below n, at most
// parallel at a time (at least 1), started in order. Once ctx ends no more
// start: notStarted(i) is called for each of those instead (may be nil).
// It returns when every run has.
func SideBySide(ctx context.Context, n, parallel int, run func(i int), notStarted func(i int)) {
	var eg errgroup.Group
	eg.SetLimit(max(parallel, 1))
	for i := range n {
		// Go blocks until a slot is free: ctx is looked at then.
		eg.Go(func() error {
			if ctx.Err() != nil {
				if notStarted != nil {
					notStarted(i)
				}
				return nil
			}
			run(i)
			return nil
		})
	}
	_ = eg.Wait()
}
