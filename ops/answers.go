package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"kubelab.dev/kubelab/cluster"
)

// What operations answer for themselves, so that no table or switch over
// kinds lives outside this package: what they need of a backend, and how
// a failed one is worded for a learner.

// Needer is an Op that needs more of its backend than the Kubernetes API.
type Needer interface {
	Needs() []cluster.Capability
}

// Describer is an Op that words its own failure for a learner (a grade's
// "expected" and "observed" lines). Ops without one are worded from their
// summary and error.
type Describer interface {
	// Expected is what the operation wanted; limit is its time limit.
	Expected(limit time.Duration) string
	// Observed is what it saw instead, from its error and output;
	// explain(expr) adds the values an expression ranged over (may
	// return ""). ok is false when the error says it best.
	Observed(err, output string, explain func(expr string) string) (observed string, ok bool)
}

// Needs is what the operation needs of its backend: the capability its
// kind needs (its summary says what needs it), and the capabilities the
// names its expression reads need (raft, audit(), scheduling()...).
func (o *Operation) Needs() map[cluster.Capability]string {
	out := map[cluster.Capability]string{}
	if n, ok := o.Op().(Needer); ok {
		what, _, more := strings.Cut(strings.TrimSpace(o.Summary()), "\n")
		if more {
			what += " …" // a script's first line names it in a refusal
		}
		for _, c := range n.Needs() {
			out[c] = what
		}
	}
	if c := o.Compiled(); c != nil {
		for _, name := range c.NeedsAny(exprNames...) {
			if _, seen := out[exprNeeds[name]]; !seen {
				out[exprNeeds[name]] = name + "()"
				if name == "raft" {
					out[exprNeeds[name]] = name
				}
			}
		}
	}
	return out
}

// exprNeeds maps the environment's names that only some backends can
// evaluate to the capability they need.
var exprNeeds = map[string]cluster.Capability{
	"raft":       cluster.CapEtcdRaft,
	"audit":      cluster.CapAuditLog,
	"trace":      cluster.CapAuditLog,
	"scheduling": cluster.CapSchedulingLog,
	"iptables":   cluster.CapNodeInternals,
	"cri":        cluster.CapNodeInternals,
	"metric":     cluster.CapComponentMetrics,
}

// exprNames are the keys of exprNeeds, in a fixed order.
var exprNames = []string{"raft", "audit", "trace", "scheduling", "iptables", "cri", "metric"}

// Describe words a failed operation for a learner: what it expected and
// what was observed (err and output are its result's). explain adds the
// values an expression ranged over.
func (o *Operation) Describe(err, output string, explain func(string) string) (expected, observed string) {
	d, ok := o.Op().(Describer)
	if ok {
		expected = d.Expected(o.TimeLimit())
	} else {
		expected = o.Summary() + " to succeed"
	}
	if o.Description != "" && !strings.HasPrefix(expected, o.Description) {
		expected = o.Description + ": " + expected
	}
	if ok {
		if obs, said := d.Observed(err, output, explain); said {
			return expected, obs
		}
	}
	return expected, err
}

// Needs of a fault: component faults, partitions or a node down; a daemon
// inside a node is no control-plane component, the backend needs real
// nodes to reach it.
func (f fault) Needs() []cluster.Capability {
	switch {
	case f.verb == "node down" || f.verb == "node up":
		return []cluster.Capability{cluster.CapNodeDown}
	case f.action == cluster.Partition || f.action == cluster.Heal:
		return []cluster.Capability{cluster.CapPartitions}
	}
	if _, _, inNode := cluster.SplitNodeDaemon(*f.target); inNode {
		return []cluster.Capability{cluster.CapNodeInternals}
	}
	return []cluster.Capability{cluster.CapComponentFaults}
}

// Needs of a snapshot: the backend's etcd snapshots.
func (s *SnapshotOp) Needs() []cluster.Capability {
	return []cluster.Capability{cluster.CapEtcdSnapshots}
}

// Needs of a restore: the backend's etcd snapshots.
func (r *RestoreOp) Needs() []cluster.Capability {
	return []cluster.Capability{cluster.CapEtcdSnapshots}
}

// Needs of a command in a node: real nodes.
func (n *NodeExecOp) Needs() []cluster.Capability {
	return []cluster.Capability{cluster.CapNodeInternals}
}

// Expected of a wait: the expression holds within the time limit.
func (w *WaitOp) Expected(limit time.Duration) string {
	return fmt.Sprintf("`%s` to hold within %s", w.Expr, limit)
}

// Observed of a wait: the expression was false.
func (w *WaitOp) Observed(err, _ string, explain func(string) string) (string, bool) {
	return falseObserved(w.compiledSource(), err, explain), true
}

// Expected of an assert: the expression holds (within its duration).
func (a *AssertOp) Expected(time.Duration) string {
	if a.Within.Duration > 0 {
		return fmt.Sprintf("`%s` to hold within %s", a.Expr, a.Within)
	}
	return fmt.Sprintf("`%s` to hold", a.Expr)
}

// Observed of an assert: the expression was false.
func (a *AssertOp) Observed(err, _ string, explain func(string) string) (string, bool) {
	return falseObserved(a.compiledSource(), err, explain), true
}

// falseObserved words a wait or assert whose expression did not hold.
func falseObserved(src, err string, explain func(string) string) string {
	if strings.HasSuffix(err, context.DeadlineExceeded.Error()) {
		return src + " = false at every evaluation" + explain(src)
	}
	return src + " = false" + explain(src)
}

// Expected of an error: the expression is false (for its duration).
func (e *ErrorOp) Expected(time.Duration) string {
	if e.For.Duration > 0 {
		return fmt.Sprintf("`%s` to stay false for %s", e.Expr, e.For)
	}
	return fmt.Sprintf("`%s` to be false", e.Expr)
}

// Observed of an error: the expression held; other failures say it best.
func (e *ErrorOp) Observed(err, _ string, explain func(string) string) (string, bool) {
	if strings.Contains(err, "it held") {
		return e.Expr + " = true" + explain(e.Expr), true
	}
	return "", false
}

// Expected of kubectl: it succeeds or fails, with output matching.
func (k *KubectlOp) Expected(time.Duration) string {
	return commandExpectation(k.Summary(), k.ExpectError, k.ExpectOutput)
}

// Observed of kubectl: how it ended, and its output.
func (k *KubectlOp) Observed(err, output string, _ func(string) string) (string, bool) {
	return commandObserved(k.Summary(), err, output), true
}

// Expected of a script: it succeeds or fails, with output matching.
func (s *ScriptOp) Expected(time.Duration) string {
	return commandExpectation(s.Command, s.ExpectError, s.ExpectOutput)
}

// Observed of a script: how it ended, and its output.
func (s *ScriptOp) Observed(err, output string, _ func(string) string) (string, bool) {
	return commandObserved(s.Command, err, output), true
}

func commandExpectation(cmd string, expectError bool, expectOutput string) string {
	verb := "to succeed"
	if expectError {
		verb = "to fail"
	}
	s := fmt.Sprintf("`%s` %s", cmd, verb)
	if expectOutput != "" {
		s += fmt.Sprintf(" with output matching /%s/", expectOutput)
	}
	return s
}

// commandObserved is the first part of a command's error (what it did)
// and its output.
func commandObserved(what, err, output string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(err, what), ";")
	first = strings.TrimPrefix(first, ": ")
	if strings.HasPrefix(first, " succeeded") {
		first = "it succeeded"
	}
	out := strings.TrimSpace(output)
	if out == "" {
		out = "(none)"
	}
	return first + "; output: " + out
}

// compiledSource is the expression as compiled (its source as written
// when it did not compile).
func (w *WaitOp) compiledSource() string {
	if w.compiled != nil {
		return w.compiled.Source
	}
	return w.Expr
}

func (a *AssertOp) compiledSource() string {
	if a.compiled != nil {
		return a.compiled.Source
	}
	return a.Expr
}
