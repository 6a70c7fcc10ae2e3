package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

// exec runs one operation. Each kind is a small function; this is the only
// switch over kinds at run time.
func (x *run) exec(ctx context.Context, op *Operation) (string, error) {
	switch {
	case op.Apply != nil:
		return x.applyObjects(ctx, op.Apply, false)
	case op.Create != nil:
		return x.applyObjects(ctx, op.Create, true)
	case op.Patch != nil:
		return "", x.patch(ctx, op.Patch)
	case op.Delete != nil:
		return x.delete(ctx, op.Delete)
	case op.Label != nil:
		return "", x.label(ctx, op.Label)
	case op.Wait != nil:
		return "", x.wait(ctx, op.Compiled())
	case op.Assert != nil:
		return "", x.assert(ctx, op.Compiled(), op.Assert.Within.Duration)
	case op.Error != nil:
		return "", x.refute(ctx, op.Compiled(), op.Error.For.Duration)
	case op.Record != nil:
		return x.record(op.Record.Name, op.Compiled())
	case op.Cordon != nil:
		return "", x.setUnschedulable(ctx, op.Cordon.Node, true)
	case op.Uncordon != nil:
		return "", x.setUnschedulable(ctx, op.Uncordon.Node, false)
	case op.Drain != nil:
		return x.drain(ctx, op.Drain)
	case op.Taint != nil:
		return "", x.taint(ctx, op.Taint)
	case op.Untaint != nil:
		return "", x.untaint(ctx, op.Untaint)
	case op.Kill != nil:
		return x.fault(ctx, op.Kill.Target, cluster.Kill)
	case op.Stop != nil:
		return x.fault(ctx, op.Stop.Target, cluster.Stop)
	case op.Start != nil:
		return x.fault(ctx, op.Start.Target, cluster.Start)
	case op.Restart != nil:
		return x.fault(ctx, op.Restart.Target, cluster.Restart)
	case op.Pause != nil:
		return x.fault(ctx, op.Pause.Target, cluster.Pause)
	case op.Resume != nil:
		return x.fault(ctx, op.Resume.Target, cluster.Resume)
	case op.Partition != nil:
		return x.fault(ctx, op.Partition.Target, cluster.Partition)
	case op.Heal != nil:
		return x.fault(ctx, op.Heal.Target, cluster.Heal)
	case op.NodeDown != nil:
		return x.fault(ctx, op.NodeDown.Node, cluster.Kill)
	case op.NodeUp != nil:
		return x.fault(ctx, op.NodeUp.Node, cluster.Start)
	case op.Kubectl != nil:
		return x.kubectl(ctx, op.Kubectl)
	case op.Script != nil:
		return x.script(ctx, op.Script)
	case op.Sleep != nil:
		return "", sleep(ctx, op.Sleep.Duration.Duration)
	}
	return "", fmt.Errorf("operation has no kind")
}

// fault applies a fault or repair to a component resolved now.
func (x *run) fault(ctx context.Context, target string, a cluster.Action) (string, error) {
	name, err := x.c.Resolve(ctx, target)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", a, target, err)
	}
	subject := name
	if name != target {
		subject = target + "=" + name
	}
	x.tl.add(EventFault, string(a), subject)
	if err := x.c.Act(ctx, name, a); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s", a, subject), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// record evaluates an expression into a binding.
func (x *run) record(name string, c *assertions.Compiled) (string, error) {
	v, err := assertions.Eval(c, x.live, x.bindings)
	if err != nil {
		return "", err
	}
	x.bindings[name] = v
	return fmt.Sprintf("%s = %s", name, assertions.Format(v)), nil
}

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
func (x *run) wait(ctx context.Context, c *assertions.Compiled) error {
	start := time.Now()
	tick := time.NewTicker(pollEvery(c))
	defer tick.Stop()
	var last error
	for {
		ok, err := assertions.Holds(c, x.live, x.bindings)
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return &CheckFailure{Expr: c.Source, Want: "to hold", Waited: time.Since(start),
				Observed: assertions.Explain(c, x.live, x.bindings), Cause: errors.Join(last, ctx.Err())}
		case <-x.live.Changed():
		case <-tick.C:
		}
	}
}

// assert checks c now, or lets it become true within d.
func (x *run) assert(ctx context.Context, c *assertions.Compiled, within time.Duration) error {
	if within > 0 {
		wctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		return x.wait(wctx, c)
	}
	// "Now" is as of the watch-fed view, which may be a watch event behind
	// the lab's own last write: allow it watchLag to catch up.
	wctx, cancel := context.WithTimeout(ctx, watchLag)
	defer cancel()
	if err := x.wait(wctx, c); err != nil {
		var cf *CheckFailure
		if errors.As(err, &cf) && ctx.Err() == nil {
			// Not a wait: report it as "does not hold", with any evaluation error.
			_, cf.Cause = assertions.Holds(c, x.live, x.bindings)
			cf.Waited = 0
		}
		return err
	}
	return nil
}

// watchLag is how long a check of "now" gives the watch-fed view to catch
// up with writes the lab has just made.
const watchLag = time.Second

// refute checks c is false now (allowing the view watchLag to catch up),
// or that it stays false for d.
func (x *run) refute(ctx context.Context, c *assertions.Compiled, d time.Duration) error {
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
			Observed: assertions.Explain(c, x.live, x.bindings), Cause: errors.New("it held")}
	}
	for {
		ok, err := assertions.Holds(c, x.live, x.bindings)
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
		case <-x.live.Changed():
		case <-tick.C:
		}
	}
}

// kubectl runs the built-in kubectl against the lab cluster.
func (x *run) kubectl(ctx context.Context, k *KubectlOp) (string, error) {
	args := append([]string{"kubectl"}, k.Args...)
	if k.Namespace != "" {
		args = append(args, "--namespace", k.Namespace)
	}
	cmd := exec.CommandContext(ctx, x.r.Binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+x.c.Access().Kubeconfig)
	return runCommand(cmd, "kubectl "+strings.Join(k.Args, " "), k.ExpectError, k.expect)
}

// script runs a shell command with KUBECONFIG and KUBECTL set.
func (x *run) script(ctx context.Context, s *ScriptOp) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+x.c.Access().Kubeconfig, "KUBECTL="+x.r.Binary+" kubectl")
	return runCommand(cmd, s.Command, s.ExpectError, s.expect)
}

func runCommand(cmd *exec.Cmd, what string, expectError bool, expect *regexp.Regexp) (string, error) {
	out, err := cmd.CombinedOutput()
	text := strings.TrimRight(string(out), "\n")
	switch {
	case expectError && err == nil:
		return text, fmt.Errorf("%s succeeded, expected it to fail; output:\n%s", what, text)
	case !expectError && err != nil:
		return text, fmt.Errorf("%s: %w; output:\n%s", what, err, text)
	case expect != nil && !expect.MatchString(text):
		return text, fmt.Errorf("%s: output does not match /%s/; output:\n%s", what, expect, text)
	}
	return text, nil
}

// summarize describes an operation in a few words for progress and reports.
func summarize(op *Operation) string {
	if op.Description != "" {
		return op.Description
	}
	switch {
	case op.Apply != nil:
		return "apply " + manifestSummary(op.Apply.File, op.Apply.Objects())
	case op.Create != nil:
		return "create " + manifestSummary(op.Create.File, op.Create.Objects())
	case op.Patch != nil:
		return fmt.Sprintf("patch %s/%s", op.Patch.Kind, op.Patch.Name)
	case op.Delete != nil:
		d := op.Delete
		if d.Name != "" || d.Selector != "" {
			return fmt.Sprintf("delete %s %s%s", d.Kind, d.Name, d.Selector)
		}
		return "delete " + manifestSummary(d.File, d.Objects())
	case op.Label != nil:
		return fmt.Sprintf("label %s %s", op.Label.Kind, op.Label.Name)
	case op.Wait != nil:
		return "wait " + op.Wait.Expr
	case op.Assert != nil:
		return "assert " + op.Assert.Expr
	case op.Error != nil:
		return "error " + op.Error.Expr
	case op.Record != nil:
		return fmt.Sprintf("record %s = %s", op.Record.Name, op.Record.Expr)
	case op.Cordon != nil:
		return "cordon " + op.Cordon.Node
	case op.Uncordon != nil:
		return "uncordon " + op.Uncordon.Node
	case op.Drain != nil:
		return "drain " + op.Drain.Node
	case op.Taint != nil:
		return fmt.Sprintf("taint %s %s=%s:%s", op.Taint.Node, op.Taint.Key, op.Taint.Value, op.Taint.Effect)
	case op.Untaint != nil:
		return fmt.Sprintf("untaint %s %s", op.Untaint.Node, op.Untaint.Key)
	case op.Kill != nil, op.Stop != nil, op.Start != nil, op.Restart != nil, op.Pause != nil, op.Resume != nil, op.Partition != nil, op.Heal != nil:
		return op.Kind() + " " + firstNonNil(op.Kill, op.Stop, op.Start, op.Restart, op.Pause, op.Resume, op.Partition, op.Heal).Target
	case op.NodeDown != nil:
		return "node down " + op.NodeDown.Node
	case op.NodeUp != nil:
		return "node up " + op.NodeUp.Node
	case op.Kubectl != nil:
		return "kubectl " + strings.Join(op.Kubectl.Args, " ")
	case op.Script != nil:
		return "script " + op.Script.Command
	case op.Sleep != nil:
		return "sleep " + op.Sleep.Duration.String()
	}
	return op.Kind()
}

func firstNonNil(ts ...*TargetOp) *TargetOp {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return &TargetOp{}
}

func manifestSummary(file string, objs []Object) string {
	var names []string
	for _, o := range objs {
		kind, _ := o.Content["kind"].(string)
		meta, _ := o.Content["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		names = append(names, kind+"/"+name)
	}
	s := strings.Join(names, ", ")
	if file != "" {
		s = file + ": " + s
	}
	return s
}
