package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"kubelab.dev/kubelab/cluster"
)

func init() {
	for _, f := range []struct {
		kind   string
		action cluster.Action
	}{
		{"kill", cluster.Kill}, {"stop", cluster.Stop}, {"start", cluster.Start}, {"restart", cluster.Restart},
		{"pause", cluster.Pause}, {"resume", cluster.Resume}, {"partition", cluster.Partition}, {"heal", cluster.Heal},
	} {
		Register(f.kind, "{target: etcd-leader}", func(t *TargetOp) Op {
			validate := t.Validate
			if f.action == cluster.Partition || f.action == cluster.Heal {
				validate = t.validateWhole
			}
			return fault{&t.Target, f.kind, f.action, validate}
		})
	}
	Register("nodeDown", "{node: worker-1}", func(n *NodeOp) Op {
		return fault{&n.Node, "node down", cluster.Kill, n.Validate}
	})
	Register("nodeUp", "{node: worker-1}", func(n *NodeOp) Op {
		return fault{&n.Node, "node up", cluster.Start, n.Validate}
	})
}

// TargetOp names a component to kill, stop, start, restart, pause or
// resume (or to partition or heal).
type TargetOp struct {
	Target string `yaml:"target"`
}

// Validate checks the target names a component, a role or a daemon inside
// a node.
func (t *TargetOp) Validate(c Checker) { c.Target(t.Target, "target") }

// validateWhole is Validate for partition and heal, which cut a whole
// container off the network: a daemon inside a node has no network of its
// own.
func (t *TargetOp) validateWhole(c Checker) {
	if node, _, ok := cluster.SplitNodeDaemon(t.Target); ok && !strings.Contains(t.Target, "${") {
		c.Errorf("target", "%q is a daemon inside a node: a partition cuts off a whole component or node (target: %s)", t.Target, node)
		return
	}
	if strings.HasPrefix(t.Target, cluster.ControlPlaneNodePrefix) {
		// Its components run apart (processes or containers of their own):
		// cutting each off would also cut them off one another, which a
		// partitioned machine's components are not.
		c.Errorf("target", "%q is a control-plane node: a partition cuts off one component (etcd-N, kube-apiserver-N...), not a stacked node", t.Target)
		return
	}
	t.Validate(c)
}

// fault applies a fault or repair to a component (or node) resolved when
// it runs.
type fault struct {
	target   *string // the body's target or node
	verb     string  // "kill", "node down"...
	action   cluster.Action
	validate func(Checker)
}

func (f fault) Summary() string               { return f.verb + " " + *f.target }
func (f fault) DefaultTimeout() time.Duration { return slowTimeout }
func (f fault) Validate(c Checker)            { f.validate(c) }

func (f fault) Exec(ctx context.Context, env Env) (string, error) {
	c, target := env.Cluster(), *f.target
	if hits, node, err := c.NodeHits(ctx, target, f.action); node {
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", f.action, target, err)
		}
		return f.execNode(ctx, env, c, target, hits)
	}
	name, err := c.Resolve(ctx, target)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", f.action, target, err)
	}
	subject := name
	if name != target {
		subject = target + "=" + name
	}
	if f.action == cluster.Start || f.action == cluster.Resume {
		if running, err := alreadyRunning(ctx, c, name); err != nil {
			return "", fmt.Errorf("%s %s: %w", f.action, subject, err)
		} else if running {
			// Nothing happens to it, so the timeline gets no fault: a
			// learner reads every fault there as something done to the
			// cluster.
			return fmt.Sprintf("%s %s: already running, left as it is", f.action, subject), nil
		}
	}
	at := time.Now()
	if err := c.Act(ctx, name, f.action); err != nil {
		return "", err
	}
	env.Fault(f.action, subject, at)
	return fmt.Sprintf("%s %s", f.action, subject), nil
}

// execNode applies the fault to the components of a stacked topology's
// control-plane node it changes (cluster's NodeHits) at once, as a
// failing machine takes them all. Each gets its fault on the timeline, as
// "control-plane-2=etcd-2".
func (f fault) execNode(ctx context.Context, env Env, c *cluster.Cluster, node string, hit []string) (string, error) {
	if len(hit) == 0 {
		return fmt.Sprintf("%s %s: already running, left as it is", f.action, node), nil
	}
	at := time.Now()
	if err := c.ActAll(ctx, hit, f.action); err != nil {
		return "", fmt.Errorf("%s %s: %w", f.action, node, err)
	}
	for _, m := range hit {
		env.Fault(f.action, node+"="+m, at)
	}
	return fmt.Sprintf("%s %s (%s)", f.action, node, strings.Join(hit, ", ")), nil
}

// alreadyRunning says whether the component name is running (not paused,
// stopped or exited). A daemon inside a node is not a component of the
// list; it counts as not running, and its start goes to the backend.
func alreadyRunning(ctx context.Context, c *cluster.Cluster, name string) (bool, error) {
	comps, err := c.Components(ctx)
	if err != nil {
		return false, err
	}
	for _, comp := range comps {
		if comp.Name == name {
			return comp.State == cluster.StateRunning, nil
		}
	}
	return false, nil
}
