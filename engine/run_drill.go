package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"kubelab.dev/kubelab/ops"
)

// Eventually runs op again and again until it passes, for at most within:
// for effects that reach every apiserver a moment after the write that
// causes them, such as a new admission policy or RBAC binding, which
// apiservers load through informers. Each attempt is bounded by the
// operation's own timeout; attempts back off from 200ms to 2s. The result
// is that of the last complete attempt, with the attempt count and total
// duration.
func (s *Session) Eventually(ctx context.Context, op *ops.Operation, within time.Duration) OpResult {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	start := time.Now()
	delay := 200 * time.Millisecond
	var last OpResult
	for n := 1; ; n++ {
		r := s.Exec(ctx, op)
		if r.Status == Passed {
			r.Duration = time.Since(start)
			if n > 1 {
				r.Summary = fmt.Sprintf("%s (passed at attempt %d)", r.Summary, n)
			}
			return r
		}
		// An attempt cut short by the deadline says less than the one
		// before it: keep the last complete one.
		if ctx.Err() == nil || n == 1 {
			last = r
		}
		if ctx.Err() != nil || ops.Sleep(ctx, delay) != nil {
			last.Duration = time.Since(start)
			last.Error = fmt.Sprintf("still failing after %d attempts over %s; last attempt: %s",
				n, last.Duration.Round(10*time.Millisecond), last.Error)
			return last
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// errStopped cancels a background check that was stopped on purpose.
var errStopped = errors.New("background check stopped")

// Background runs an error operation (an expression that must stay false)
// concurrently with the operations that follow it, for at most its
// error.for duration: "availability never drops below 2 while the node
// drains". The check has its own snapshot of the bindings and shares the
// cluster view and timeline. stop ends the check early and returns its
// result: passed when the expression never held until then.
func (s *Session) Background(ctx context.Context, op *ops.Operation) (stop func() OpResult, err error) {
	if op.Error == nil || op.Compiled() == nil {
		return nil, fmt.Errorf("only a prepared error operation runs in the background, got %q", op.Kind())
	}
	bx := *s.x
	bx.bindings = maps.Clone(s.x.bindings)
	step := s.step
	ctx, cancel := context.WithCancelCause(ctx)
	r := OpResult{Kind: op.Kind(), Line: op.Pos().Line, Summary: "in the background: " + op.Summary(), Status: Passed}
	done := make(chan error, 1)
	start := time.Now()
	s.x.progress(step, "%s", r.Summary)
	go func() { _, err := bx.exec(ctx, op); done <- err }()
	return func() OpResult {
		cancel(errStopped)
		err := <-done
		r.Duration = time.Since(start)
		var cf *CheckFailure
		if err != nil && (errors.As(err, &cf) || context.Cause(ctx) != errStopped) {
			r.Status, r.Error = Failed, err.Error()
			if cf != nil {
				r.Observed = cf.Observed
			}
		}
		return r
	}, nil
}
