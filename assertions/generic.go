package assertions

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// generic reads any resource through a dynamic client, resolving names
// ("poddisruptionbudgets", "pdb", "PodDisruptionBudget",
// "deployments.apps") with discovery as kubectl does. It is polled: each
// evaluation asks the apiserver (no informer watches arbitrary kinds), so
// waits on get(), list() and can() re-evaluate on a fast poll.
type generic struct {
	once   sync.Once
	err    error
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	reset  func()
	cs     kubernetes.Interface
}

func (g *generic) init(l *Live) error {
	g.once.Do(func() {
		cs, err := l.c.Client()
		if err != nil {
			g.err = err
			return
		}
		d, err := l.c.Dynamic()
		if err != nil {
			g.err = err
			return
		}
		g.dyn, g.cs, g.reset, g.mapper = d.Client, cs, d.Mapper.Reset, d.Shortcuts
	})
	return g.err
}

// resource resolves a resource name to its mapping; a name discovery does
// not know yet (a CRD just created) is looked up again after a reset.
func (g *generic) resource(name string) (*meta.RESTMapping, error) {
	gr := schema.ParseGroupResource(strings.ToLower(name))
	find := func() (*meta.RESTMapping, error) {
		gvk, err := g.mapper.KindFor(gr.WithVersion(""))
		if err != nil {
			return nil, err
		}
		return g.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	m, err := find()
	if err != nil {
		g.reset()
		if m, err = find(); err != nil {
			return nil, fmt.Errorf("unknown resource %q: %w", name, err)
		}
	}
	return m, nil
}

func (g *generic) client(name, namespace string) (dynamic.ResourceInterface, error) {
	m, err := g.resource(name)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return g.dyn.Resource(m.Resource).Namespace(namespace), nil
	}
	return g.dyn.Resource(m.Resource), nil
}

// Get implements View: the object as a map, nil when it does not exist.
func (l *Live) Get(ctx context.Context, resource, namespace, name string) (map[string]any, error) {
	if err := l.generic.init(l); err != nil {
		return nil, err
	}
	ri, err := l.generic.client(resource, namespace)
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

// List implements View: the objects matching a label selector, by name.
func (l *Live) List(ctx context.Context, resource, namespace, selector string) ([]map[string]any, error) {
	if err := l.generic.init(l); err != nil {
		return nil, err
	}
	ri, err := l.generic.client(resource, namespace)
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
	out := make([]map[string]any, 0, len(list.Items))
	for _, it := range list.Items {
		out = append(out, it.Object)
	}
	return out, nil
}

// Can implements View with a SubjectAccessReview: the apiserver's own
// authorizers answer whether user may verb resource in namespace ("" for
// cluster-scoped resources). resource is named as kubectl auth can-i
// names it ("pods", "leases", "deploy", "deployments.apps"; discovery
// gives the group), with a subresource after a slash ("pods/log"); a
// name discovery does not know is asked as written. A service account's
// user name (system:serviceaccount:NS:NAME) gets the groups its token
// would carry, so bindings to system:serviceaccounts[:NS] count.
func (l *Live) Can(ctx context.Context, user, verb, resource, namespace string) (bool, error) {
	if err := l.generic.init(l); err != nil {
		return false, err
	}
	res, sub, _ := strings.Cut(resource, "/")
	gr := schema.ParseGroupResource(res)
	if m, err := l.generic.resource(res); err == nil {
		gr = m.Resource.GroupResource()
	}
	groups := []string{"system:authenticated"}
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		ns, _, _ := strings.Cut(rest, ":")
		groups = append(groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: gr.Group, Resource: gr.Resource, Subresource: sub},
	}}
	out, err := l.generic.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subject access review: %w", err)
	}
	if out.Status.EvaluationError != "" && !out.Status.Allowed {
		return false, fmt.Errorf("subject access review: %s", out.Status.EvaluationError)
	}
	return out.Status.Allowed, nil
}
