package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

const fieldManager = "kubelab"

// api holds the clients operations use, made on first use.
type api struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func (x *run) api() (*api, error) {
	if x.clients != nil {
		return x.clients, nil
	}
	cfg, err := x.c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := x.c.Client()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	x.clients = &api{cs: cs, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	return x.clients, nil
}

// resource finds the REST resource of an object kind ("Deployment", or
// "apps/v1" + "Deployment" when apiVersion is known).
func (a *api) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	var gk schema.GroupKind
	var versions []string
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		gk, versions = gv.WithKind(kind).GroupKind(), []string{gv.Version}
	} else {
		gk = schema.ParseGroupKind(kind)
		if gk.Group == "" {
			// A bare kind ("Deployment"): find its group as kubectl does.
			if gvr, err := a.mapper.ResourceFor(schema.GroupVersionResource{Resource: strings.ToLower(kind)}); err == nil {
				if gvk, err := a.mapper.KindFor(gvr); err == nil {
					gk = gvk.GroupKind()
				}
			}
		}
	}
	m, err := a.mapper.RESTMapping(gk, versions...)
	if err != nil {
		a.mapper.Reset() // a CRD may have just been created
		if m, err = a.mapper.RESTMapping(gk, versions...); err != nil {
			return nil, fmt.Errorf("find resource for kind %q: %w", kind, err)
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = "default"
		}
		return a.dyn.Resource(m.Resource).Namespace(namespace), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// applyObjects server-side-applies (or creates) the objects of a manifest.
func (x *run) applyObjects(ctx context.Context, m *ManifestOp, create bool) (string, error) {
	a, err := x.api()
	if err != nil {
		return "", err
	}
	var done []string
	for _, o := range m.Objects() {
		u := &unstructured.Unstructured{Object: o.Content}
		ns := u.GetNamespace()
		if ns == "" {
			ns = m.Namespace
		}
		ri, err := a.resource(u.GetAPIVersion(), u.GetKind(), ns)
		if err != nil {
			return strings.Join(done, "\n"), fmt.Errorf("%s:%s: %w", o.File, o.Pos, err)
		}
		id := strings.ToLower(u.GetKind()) + "/" + u.GetName()
		if create {
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
			done = append(done, id+" created")
		} else {
			var body []byte
			body, err = json.Marshal(u.Object)
			if err == nil {
				force := true
				_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
			}
			done = append(done, id+" applied")
		}
		if err != nil {
			return strings.Join(done[:len(done)-1], "\n"), fmt.Errorf("%s %s (%s:%s): %w", map[bool]string{true: "create", false: "apply"}[create], id, o.File, o.Pos, err)
		}
	}
	return strings.Join(done, "\n"), nil
}

func (x *run) patch(ctx context.Context, p *PatchOp) error {
	a, err := x.api()
	if err != nil {
		return err
	}
	ri, err := a.resource("", p.Kind, p.Namespace)
	if err != nil {
		return err
	}
	body, err := yaml.YAMLToJSON([]byte(p.Patch))
	if err != nil {
		return fmt.Errorf("patch body: %w", err)
	}
	pt := map[string]types.PatchType{"merge": types.MergePatchType, "json": types.JSONPatchType, "strategic": types.StrategicMergePatchType, "": types.StrategicMergePatchType}[p.Type]
	if _, err := ri.Patch(ctx, p.Name, pt, body, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("patch %s/%s: %w", p.Kind, p.Name, err)
	}
	return nil
}

func (x *run) delete(ctx context.Context, d *DeleteOp) (string, error) {
	a, err := x.api()
	if err != nil {
		return "", err
	}
	type target struct {
		ri   dynamic.ResourceInterface
		name string
	}
	var targets []target
	if objs := d.Objects(); len(objs) > 0 {
		for _, o := range objs {
			u := &unstructured.Unstructured{Object: o.Content}
			ns := u.GetNamespace()
			if ns == "" {
				ns = d.Namespace
			}
			ri, err := a.resource(u.GetAPIVersion(), u.GetKind(), ns)
			if err != nil {
				return "", err
			}
			targets = append(targets, target{ri, u.GetName()})
		}
	} else {
		ri, err := a.resource("", d.Kind, d.Namespace)
		if err != nil {
			return "", err
		}
		if d.Name != "" {
			targets = append(targets, target{ri, d.Name})
		} else {
			list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: d.Selector})
			if err != nil {
				return "", fmt.Errorf("list %s %s: %w", d.Kind, d.Selector, err)
			}
			for _, it := range list.Items {
				targets = append(targets, target{ri, it.GetName()})
			}
		}
	}
	var out []string
	for _, t := range targets {
		if err := t.ri.Delete(ctx, t.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return strings.Join(out, "\n"), fmt.Errorf("delete %s: %w", t.name, err)
		}
		out = append(out, t.name+" deleted")
	}
	if d.Wait {
		for _, t := range targets {
			for {
				_, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					break
				}
				if err := sleep(ctx, 100*time.Millisecond); err != nil {
					return strings.Join(out, "\n"), fmt.Errorf("waiting for %s to be gone: %w", t.name, err)
				}
			}
		}
	}
	return strings.Join(out, "\n"), nil
}

func (x *run) label(ctx context.Context, l *LabelOp) error {
	a, err := x.api()
	if err != nil {
		return err
	}
	kind := l.Kind
	if kind == "" {
		kind = "Node"
	}
	ri, err := a.resource("", kind, l.Namespace)
	if err != nil {
		return err
	}
	labels := map[string]any{}
	for k, v := range l.Labels {
		if v == nil {
			labels[k] = nil
		} else {
			labels[k] = *v
		}
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if _, err := ri.Patch(ctx, l.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("label %s %s: %w", kind, l.Name, err)
	}
	return nil
}

// updateNode reads, changes and writes a node, retrying on conflicts.
func (x *run) updateNode(ctx context.Context, name string, change func(*corev1.Node)) error {
	a, err := x.api()
	if err != nil {
		return err
	}
	for {
		n, err := a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		change(n)
		_, err = a.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: fieldManager})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("update node %s: %w", name, err)
		}
	}
}

func (x *run) setUnschedulable(ctx context.Context, node string, v bool) error {
	return x.updateNode(ctx, node, func(n *corev1.Node) { n.Spec.Unschedulable = v })
}

func (x *run) taint(ctx context.Context, t *TaintOp) error {
	return x.updateNode(ctx, t.Node, func(n *corev1.Node) {
		taints := n.Spec.Taints[:0]
		for _, e := range n.Spec.Taints {
			if e.Key != t.Key || string(e.Effect) != t.Effect {
				taints = append(taints, e)
			}
		}
		n.Spec.Taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	})
}

func (x *run) untaint(ctx context.Context, t *UntaintOp) error {
	return x.updateNode(ctx, t.Node, func(n *corev1.Node) {
		taints := n.Spec.Taints[:0]
		for _, e := range n.Spec.Taints {
			if e.Key != t.Key || (t.Effect != "" && string(e.Effect) != t.Effect) {
				taints = append(taints, e)
			}
		}
		n.Spec.Taints = taints
	})
}

// drain cordons the node, then evicts its pods through the Eviction API
// (which honours PodDisruptionBudgets: a 429 is retried until the
// operation's deadline), skipping DaemonSet and mirror pods, and waits
// until they are gone, as kubectl drain does.
func (x *run) drain(ctx context.Context, d *DrainOp) (string, error) {
	if err := x.setUnschedulable(ctx, d.Node, true); err != nil {
		return "", err
	}
	a, err := x.api()
	if err != nil {
		return "", err
	}
	pods, err := a.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + d.Node})
	if err != nil {
		return "", fmt.Errorf("list pods on %s: %w", d.Node, err)
	}
	var out []string
	blocked := 0
	for _, p := range pods.Items {
		if skipDrain(&p) {
			continue
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if g := d.GracePeriod.Duration; g > 0 {
			secs := int64(g / time.Second)
			ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: &secs}
		}
		for {
			err := a.cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
			if err == nil || apierrors.IsNotFound(err) {
				out = append(out, "evicted "+p.Namespace+"/"+p.Name)
				break
			}
			if !apierrors.IsTooManyRequests(err) {
				return strings.Join(out, "\n"), fmt.Errorf("evict %s/%s: %w", p.Namespace, p.Name, err)
			}
			blocked++
			if serr := sleep(ctx, 500*time.Millisecond); serr != nil {
				return strings.Join(out, "\n"), fmt.Errorf("evict %s/%s: blocked by a PodDisruptionBudget (%v): %w", p.Namespace, p.Name, err, serr)
			}
		}
	}
	for {
		left, err := a.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + d.Node})
		if err != nil {
			return strings.Join(out, "\n"), err
		}
		n := 0
		for _, p := range left.Items {
			if !skipDrain(&p) {
				n++
			}
		}
		if n == 0 {
			break
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return strings.Join(out, "\n"), fmt.Errorf("%d pods still on %s: %w", n, d.Node, err)
		}
	}
	if blocked > 0 {
		out = append(out, fmt.Sprintf("(%d evictions refused by a PodDisruptionBudget and retried)", blocked))
	}
	return strings.Join(out, "\n"), nil
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
