package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"kubelab.dev/kubelab/cluster"
)

// nodeState is what a lab may change on a node and Down puts back; the
// run's record (run.json) keeps it for a later process.
type nodeState struct {
	Unschedulable bool              `json:"unschedulable,omitempty"`
	Taints        []corev1.Taint    `json:"taints,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
}

func stateOf(n *corev1.Node) nodeState {
	return nodeState{Unschedulable: n.Spec.Unschedulable, Taints: slices.Clone(n.Spec.Taints), Labels: maps.Clone(n.Labels)}
}

// Down removes what the run made: objects with its label anywhere, its
// namespace (waiting until it is gone), and the node changes of the run.
// It is idempotent, and never deletes an object without the run's label.
func (b *Backend) Down(ctx context.Context) error {
	if b.cs == nil {
		return nil
	}
	errs := []error{b.restoreNodes(ctx), b.deleteLabelled(ctx), b.deleteNamespace(ctx)}
	if err := errors.Join(errs...); err != nil {
		return err // keep the record: a second Down tries again
	}
	// The state directory is kubelab's own: the record, the kubeconfig
	// copy, and what commands kept there (the exercise a run has).
	return os.RemoveAll(b.o.Dir)
}

// restoreNodes puts back cordons, taints and labels that differ from what
// Up saw. Taints the node lifecycle controller manages are left alone.
func (b *Backend) restoreNodes(ctx context.Context) error {
	var errs []error
	for name, was := range b.nodes {
		n, err := b.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("get node %s: %w", name, err))
			continue
		}
		if !restore(n, was) {
			continue
		}
		if _, err := b.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "kubelab"}); err != nil {
			errs = append(errs, fmt.Errorf("restore node %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// restore changes n back to was and reports whether anything changed.
func restore(n *corev1.Node, was nodeState) bool {
	changed := n.Spec.Unschedulable != was.Unschedulable
	n.Spec.Unschedulable = was.Unschedulable
	system := func(t corev1.Taint) bool { return strings.HasPrefix(t.Key, "node.kubernetes.io/") }
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if system(t) {
			taints = append(taints, t)
		}
	}
	for _, t := range was.Taints {
		if !system(t) {
			taints = append(taints, t)
		}
	}
	key := func(t corev1.Taint) string { return t.Key + "=" + t.Value + ":" + string(t.Effect) }
	if !slices.Equal(keys(n.Spec.Taints, key), keys(taints, key)) {
		changed = true
		n.Spec.Taints = taints
	}
	if !maps.Equal(n.Labels, was.Labels) {
		changed = true
		n.Labels = maps.Clone(was.Labels)
	}
	return changed
}

func keys(ts []corev1.Taint, key func(corev1.Taint) string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = key(t)
	}
	slices.Sort(out)
	return out
}

const admissionGroup = "admissionregistration.k8s.io"

// deleteLabelled deletes every object, of every kind that can be listed
// and deleted, that carries the run's label (outside the run's namespace,
// which goes as a whole).
func (b *Backend) deleteLabelled(ctx context.Context) error {
	cfg := rest.CopyConfig(b.cfg)
	cfg.WarningHandler = rest.NoWarnings{} // listing every kind lists deprecated ones too
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lists, err := b.cs.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discover resources: %w", err)
	}
	// Admission configuration first: a policy of the run (an exercise's
	// protection) would refuse deleting the very objects it protects.
	sort.SliceStable(lists, func(i, j int) bool {
		return strings.HasPrefix(lists[i].GroupVersion, admissionGroup+"/") && !strings.HasPrefix(lists[j].GroupVersion, admissionGroup+"/")
	})
	var kinds []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") ||
				(gv.Group == "" && r.Name == "namespaces") || (gv.Group == "" && r.Name == "events") {
				continue
			}
			kinds = append(kinds, gv.WithResource(r.Name))
		}
	}
	// An apiserver enforces a deleted policy until its informer sees the
	// deletion: a delete it refuses meanwhile is tried again.
	deadline := time.Now().Add(admissionSettle)
	var final error // a failure not worth a retry
	err = cluster.Poll(ctx, 100*time.Millisecond, time.Second, func(ctx context.Context) error {
		errs, refused := b.deletePass(ctx, dyn, kinds)
		if len(errs) > 0 && (!refused || time.Now().After(deadline)) {
			final = errors.Join(errs...)
			return nil
		}
		return errors.Join(errs...)
	})
	return errors.Join(final, err)
}

// admissionSettle bounds how long Down retries deletes an admission
// policy refuses (the run's own policy, deleted, but still enforced).
const admissionSettle = 15 * time.Second

// deletePass deletes the objects of the run of the given kinds once. It
// says whether every failure was a refusal (Forbidden, or Invalid as a
// ValidatingAdmissionPolicy says), worth a retry.
func (b *Backend) deletePass(ctx context.Context, dyn dynamic.Interface, kinds []schema.GroupVersionResource) ([]error, bool) {
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + b.run}
	var errs []error
	refused := true
	for _, k := range kinds {
		ri := dyn.Resource(k)
		objs, err := ri.List(ctx, sel)
		if err != nil {
			continue // a kind this identity may not list holds nothing of ours
		}
		for _, o := range objs.Items {
			if (b.ownNS && o.GetNamespace() == b.ns) || o.GetLabels()[LabelRun] != b.run {
				continue
			}
			var derr error
			if o.GetNamespace() != "" {
				derr = ri.Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			} else {
				derr = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
			if derr != nil && !apierrors.IsNotFound(derr) {
				errs = append(errs, fmt.Errorf("delete %s %s: %w", k.Resource, o.GetName(), derr))
				refused = refused && (apierrors.IsForbidden(derr) || apierrors.IsInvalid(derr)) // admission says one or the other
			}
		}
	}
	return errs, refused
}

// deleteNamespace deletes the run's namespace, if the run created it, and
// waits until it is gone.
func (b *Backend) deleteNamespace(ctx context.Context) error {
	if !b.ownNS {
		return nil
	}
	nsc := b.cs.CoreV1().Namespaces()
	ns, err := nsc.Get(ctx, b.ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", b.ns, err)
	}
	if ns.Labels[LabelRun] != b.run {
		return fmt.Errorf("namespace %s is not this run's (label %s=%q): left alone", b.ns, LabelRun, ns.Labels[LabelRun])
	}
	uid := ns.UID
	if err := nsc.Delete(ctx, b.ns, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", b.ns, err)
	}
	// The namespace, terminating, takes no new pods; its pods go now,
	// without their grace periods (the lab is over), rather than when the
	// namespace controller comes to them: it starts 5 s after the delete
	// (upstream's namespaceDeletionGracePeriod), and the pods'
	// terminations took 6 s more (lab 05 on a docker cluster: 14 s from
	// the lab's end to the process's, 7 s with this). An identity that may
	// not do it loses only the time: the namespace controller deletes
	// them anyway.
	zero := int64(0)
	_ = b.cs.CoreV1().Pods(b.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	return cluster.Poll(ctx, 100*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
		n, err := nsc.Get(ctx, b.ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err == nil:
			return fmt.Errorf("namespace %s still %s", b.ns, n.Status.Phase)
		}
		return err
	})
}
