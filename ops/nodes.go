package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

func init() {
	Register("cordon", "{node: worker-1}", func(n *NodeOp) Op { return cordon{n, true} })
	Register("uncordon", "{node: worker-1}", func(n *NodeOp) Op { return cordon{n, false} })
	Register("drain", "{node: worker-1, gracePeriod: 5s}", func(d *DrainOp) Op { return d })
	Register("taint", "{node: worker-1, key: dedicated, value: db, effect: NoSchedule}", func(t *TaintOp) Op { return t })
	Register("untaint", "{node: worker-1, key: dedicated}", func(t *UntaintOp) Op { return t })
}

// NodeOp names a worker node of the topology.
type NodeOp struct {
	Node string `yaml:"node"`
}

// Validate checks the node is in the topology.
func (n *NodeOp) Validate(c Checker) { c.Node(n.Node, "node") }

// cordon marks a node unschedulable (or, uncordon, schedulable).
type cordon struct {
	*NodeOp
	unschedulable bool
}

func (o cordon) Summary() string {
	if o.unschedulable {
		return "cordon " + o.Node
	}
	return "uncordon " + o.Node
}

func (o cordon) DefaultTimeout() time.Duration { return writeTimeout }

func (o cordon) Exec(ctx context.Context, env Env) (string, error) {
	return "", setUnschedulable(ctx, env, o.Node, o.unschedulable)
}

func setUnschedulable(ctx context.Context, env Env, node string, v bool) error {
	return updateNode(ctx, env, node, func(n *corev1.Node) { n.Spec.Unschedulable = v },
		func(n assertions.Node) bool { return n.Unschedulable == v })
}

// effects are the taint effects.
var effects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

func checkEffect(c Checker, e string) {
	if e != "" && !slices.Contains(effects, e) {
		c.Errorf("effect", "invalid effect %q: want NoSchedule, PreferNoSchedule or NoExecute%s", e, c.Suggest(e, effects))
	}
}

// TaintOp adds or replaces a taint on a node.
type TaintOp struct {
	Node   string `yaml:"node"`
	Key    string `yaml:"key"`
	Value  string `yaml:"value,omitempty"`
	Effect string `yaml:"effect"`
}

// Summary shows the taint.
func (t *TaintOp) Summary() string {
	return fmt.Sprintf("taint %s %s=%s:%s", t.Node, t.Key, t.Value, t.Effect)
}

// DefaultTimeout is that of an API write.
func (t *TaintOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate checks the node and the effect.
func (t *TaintOp) Validate(c Checker) {
	c.Node(t.Node, "node")
	checkEffect(c, t.Effect)
}

// Exec replaces any taint with the same key and effect.
func (t *TaintOp) Exec(ctx context.Context, env Env) (string, error) {
	return "", updateNode(ctx, env, t.Node, func(n *corev1.Node) {
		taints := n.Spec.Taints[:0]
		for _, e := range n.Spec.Taints {
			if e.Key != t.Key || string(e.Effect) != t.Effect {
				taints = append(taints, e)
			}
		}
		n.Spec.Taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}, func(n assertions.Node) bool {
		return slices.Contains(n.Taints, assertions.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	})
}

// UntaintOp removes a taint from a node.
type UntaintOp struct {
	Node   string `yaml:"node"`
	Key    string `yaml:"key"`
	Effect string `yaml:"effect,omitempty"`
}

// Summary names the taint's key.
func (t *UntaintOp) Summary() string { return fmt.Sprintf("untaint %s %s", t.Node, t.Key) }

// DefaultTimeout is that of an API write.
func (t *UntaintOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate checks the node and the effect.
func (t *UntaintOp) Validate(c Checker) {
	c.Node(t.Node, "node")
	checkEffect(c, t.Effect)
}

// Exec removes the taints with the key (and effect, when set).
func (t *UntaintOp) Exec(ctx context.Context, env Env) (string, error) {
	return "", updateNode(ctx, env, t.Node, func(n *corev1.Node) {
		taints := n.Spec.Taints[:0]
		for _, e := range n.Spec.Taints {
			if e.Key != t.Key || (t.Effect != "" && string(e.Effect) != t.Effect) {
				taints = append(taints, e)
			}
		}
		n.Spec.Taints = taints
	}, func(n assertions.Node) bool {
		return !slices.ContainsFunc(n.Taints, func(e assertions.Taint) bool {
			return e.Key == t.Key && (t.Effect == "" || e.Effect == t.Effect)
		})
	})
}

// DrainOp drains a node.
type DrainOp struct {
	Node        string           `yaml:"node"`
	GracePeriod cluster.Duration `yaml:"gracePeriod,omitempty"`
}

// Summary names the node.
func (d *DrainOp) Summary() string { return "drain " + d.Node }

// DefaultTimeout leaves time for pods to terminate.
func (d *DrainOp) DefaultTimeout() time.Duration { return 2 * time.Minute }

// Validate checks the node.
func (d *DrainOp) Validate(c Checker) { c.Node(d.Node, "node") }

// Exec cordons the node, then evicts its pods through the Eviction API
// (which honours PodDisruptionBudgets: a 429 is retried until the
// operation's deadline), skipping DaemonSet and mirror pods, and waits
// until they are gone, as kubectl drain does.
func (d *DrainOp) Exec(ctx context.Context, env Env) (string, error) {
	if err := setUnschedulable(ctx, env, d.Node, true); err != nil {
		return "", err
	}
	a, err := env.Clients()
	if err != nil {
		return "", err
	}
	pods, err := a.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + d.Node})
	if err != nil {
		return "", fmt.Errorf("list pods on %s: %w", d.Node, err)
	}
	var out []string
	blocked := 0
	for _, p := range pods.Items {
		if skipDrain(&p) {
			continue
		}
		n, err := d.evict(ctx, a, &p)
		blocked += n
		if err != nil {
			return strings.Join(out, "\n"), err
		}
		out = append(out, "evicted "+p.Namespace+"/"+p.Name)
	}
	if err := d.waitGone(ctx, a); err != nil {
		return strings.Join(out, "\n"), err
	}
	if blocked > 0 {
		out = append(out, fmt.Sprintf("(%d evictions refused by a PodDisruptionBudget and retried)", blocked))
	}
	return strings.Join(out, "\n"), nil
}

// evict evicts one pod, retrying while a PodDisruptionBudget refuses; it
// returns how many times it was refused.
func (d *DrainOp) evict(ctx context.Context, a *Clients, p *corev1.Pod) (int, error) {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
	if g := d.GracePeriod.Duration; g > 0 {
		secs := int64(g / time.Second)
		ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: &secs}
	}
	for blocked := 0; ; blocked++ {
		err := a.Clientset.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) {
			return blocked, nil
		}
		if !apierrors.IsTooManyRequests(err) {
			return blocked, fmt.Errorf("evict %s/%s: %w", p.Namespace, p.Name, err)
		}
		if serr := Sleep(ctx, 500*time.Millisecond); serr != nil {
			return blocked + 1, fmt.Errorf("evict %s/%s: blocked by a PodDisruptionBudget (%v): %w", p.Namespace, p.Name, err, serr)
		}
	}
}

// waitGone waits until only pods a drain skips are left on the node.
func (d *DrainOp) waitGone(ctx context.Context, a *Clients) error {
	for {
		left, err := a.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + d.Node})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range left.Items {
			if !skipDrain(&p) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		if err := Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("%d pods still on %s: %w", n, d.Node, err)
		}
	}
}

func skipDrain(p *corev1.Pod) bool {
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
