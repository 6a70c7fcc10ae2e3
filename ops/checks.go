package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

func init() {
	Register("wait", "{expr: 'raft.leader != \"\"', timeout: 20s}", func(w *WaitOp) Op { return w })
	Register("assert", "{expr: 'len(raft.members) == 3', within: 5s}", func(a *AssertOp) Op { return a })
	Register("error", "{expr: 'raft.leader == \"\"', for: 2s}", func(e *ErrorOp) Op { return e })
}

// WaitOp waits until an expression holds; the operation's timeout bounds
// the wait.
type WaitOp struct {
	Expr    string           `yaml:"expr"`
	Timeout cluster.Duration `yaml:"timeout,omitempty"`

	compiled *assertions.Compiled
}

// Compiled is the type-checked expression.
func (w *WaitOp) Compiled() *assertions.Compiled { return w.compiled }

// Summary shows the expression.
func (w *WaitOp) Summary() string { return "wait " + w.Expr }

// DefaultTimeout is wait.timeout, or that of a check.
func (w *WaitOp) DefaultTimeout() time.Duration {
	if t := w.Timeout.Duration; t > 0 {
		return t
	}
	return slowTimeout
}

// Validate compiles the expression and refuses two different timeouts.
func (w *WaitOp) Validate(c Checker) {
	w.compiled = c.Expr(w.Expr, "expr", true)
	if t, own := w.Timeout.Duration, c.Timeout(); t != 0 && own != 0 && own != t {
		c.Errorf("timeout", "two timeouts (%s and %s): set the operation's timeout or wait.timeout, not both", cluster.Duration{Duration: own}, w.Timeout)
	}
}

// Exec waits until the expression holds.
func (w *WaitOp) Exec(ctx context.Context, env Env) (string, error) {
	return "", wait(ctx, env, w.compiled)
}

// AssertOp checks that an expression holds.
type AssertOp struct {
	Expr   string           `yaml:"expr"`
	Within cluster.Duration `yaml:"within,omitempty"`

	compiled *assertions.Compiled
}

// Compiled is the type-checked expression.
func (a *AssertOp) Compiled() *assertions.Compiled { return a.compiled }

// Summary shows the expression.
func (a *AssertOp) Summary() string { return "assert " + a.Expr }

// DefaultTimeout is that of a check, on top of within.
func (a *AssertOp) DefaultTimeout() time.Duration { return slowTimeout }

// OwnDuration is within.
func (a *AssertOp) OwnDuration() time.Duration { return a.Within.Duration }

// Validate compiles the expression.
func (a *AssertOp) Validate(c Checker) { a.compiled = c.Expr(a.Expr, "expr", true) }

// Exec checks the expression now, or lets it become true within Within.
func (a *AssertOp) Exec(ctx context.Context, env Env) (string, error) {
	c := a.compiled
	if within := a.Within.Duration; within > 0 {
		wctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		return "", wait(wctx, env, c)
	}
	// "Now" is as of the watch-fed view, which may be a watch event behind
	// the lab's own last write: allow it watchLag to catch up.
	wctx, cancel := context.WithTimeout(ctx, watchLag)
	defer cancel()
	if err := wait(wctx, env, c); err != nil {
		var cf *CheckFailure
		if errors.As(err, &cf) && ctx.Err() == nil {
			// One more look with the operation's own time: a lookup slower
			// than the watch lag (cri() and iptables() run commands in a
			// node) ended with the lag's deadline, and says nothing of the
			// cluster. Otherwise report "does not hold", with any
			// evaluation error.
			ok, herr := assertions.Holds(ctx, c, env.View(), env.Bindings())
			if ok {
				return "", nil
			}
			cf.Cause, cf.Waited = herr, 0
		}
		return "", err
	}
	return "", nil
}

// ErrorOp checks that an expression does not hold.
type ErrorOp struct {
	Expr string           `yaml:"expr"`
	For  cluster.Duration `yaml:"for,omitempty"`

	compiled *assertions.Compiled
}

// Compiled is the type-checked expression.
func (e *ErrorOp) Compiled() *assertions.Compiled { return e.compiled }

// Summary shows the expression.
func (e *ErrorOp) Summary() string { return "error " + e.Expr }

// DefaultTimeout is that of a check, on top of for.
func (e *ErrorOp) DefaultTimeout() time.Duration { return slowTimeout }

// OwnDuration is for.
func (e *ErrorOp) OwnDuration() time.Duration { return e.For.Duration }

// Validate compiles the expression.
func (e *ErrorOp) Validate(c Checker) { e.compiled = c.Expr(e.Expr, "expr", true) }

// Exec checks the expression is false now (allowing the view watchLag to
// catch up), or that it stays false for For.
func (e *ErrorOp) Exec(ctx context.Context, env Env) (string, error) {
	return "", refute(ctx, env, e.compiled, e.For.Duration)
}

// CheckFailure is the error of a wait, assert or error operation that
// failed: what was expected, what was seen at the last evaluation, and how
// long it waited.
type CheckFailure struct {
	Expr     string
	Want     string // "to hold", "not to hold"
	Waited   time.Duration
	Observed []assertions.Observation
	Cause    error // evaluation error or ctx error, if any
}

func (f *CheckFailure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "expected %s %s", f.Expr, f.Want)
	if f.Waited > 0 {
		fmt.Fprintf(&b, " (waited %s)", f.Waited.Round(10*time.Millisecond))
	}
	if f.Cause != nil {
		fmt.Fprintf(&b, ": %v", f.Cause)
	}
	if len(f.Observed) > 0 {
		b.WriteString("\nobserved at the last evaluation:\n")
		b.WriteString(strings.TrimRight(assertions.String(f.Observed), "\n"))
	}
	return b.String()
}

func (f *CheckFailure) Unwrap() error { return f.Cause }

// watchLag is how long a check of "now" gives the watch-fed view to catch
// up with writes the lab has just made.
const watchLag = time.Second

// pollEvery is the fallback re-evaluation period: expressions reading the
// Raft table, components or apiserver health (not watched) poll fast.
func pollEvery(c *assertions.Compiled) time.Duration {
	if c.Polls() {
		return 100 * time.Millisecond
	}
	return time.Second
}

// wait re-evaluates c on every watched change (and on a slow poll) until it
// holds or ctx ends.
func wait(ctx context.Context, env Env, c *assertions.Compiled) error {
	view := env.View()
	start := time.Now()
	tick := time.NewTicker(pollEvery(c))
	defer tick.Stop()
	var last error
	for {
		bindings := env.Bindings() // background probes update theirs
		ok, err := assertions.Holds(ctx, c, view, bindings)
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			// The explanation is the last look at the cluster, after the
			// deadline: its lookups must not inherit it.
			return &CheckFailure{Expr: c.Source, Want: "to hold", Waited: time.Since(start),
				Observed: assertions.Explain(context.WithoutCancel(ctx), c, view, bindings), Cause: errors.Join(last, ctx.Err())}
		case <-view.Changed():
		case <-tick.C:
		}
	}
}

// refute checks c is false now (allowing the view watchLag to catch up),
// or that it stays false for d.
func refute(ctx context.Context, env Env, c *assertions.Compiled, d time.Duration) error {
	view := env.View()
	start := time.Now()
	settle := time.NewTimer(watchLag)
	defer settle.Stop()
	var deadline <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(pollEvery(c))
	defer tick.Stop()
	held := func() error {
		return &CheckFailure{Expr: c.Source, Want: "not to hold", Waited: time.Since(start),
			Observed: assertions.Explain(ctx, c, view, env.Bindings()), Cause: errors.New("it held")}
	}
	for {
		ok, err := assertions.Holds(ctx, c, view, env.Bindings())
		switch {
		case err != nil:
			return &CheckFailure{Expr: c.Source, Want: "not to hold", Waited: time.Since(start), Cause: err}
		case ok && d > 0:
			return held()
		case !ok && d == 0:
			return nil
		}
		select {
		case <-settle.C:
			if d == 0 {
				return held() // still true after the view caught up
			}
		case <-deadline:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("checking %s stays false for %s: %w", c.Source, d, ctx.Err())
		case <-view.Changed():
		case <-tick.C:
		}
	}
}
