package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

const fieldManager = "kubelab"

// Clients are the API clients operations use.
type Clients struct {
	// Clientset is the typed client.
	Clientset kubernetes.Interface
	dyn       dynamic.Interface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	// namespace is where namespaced objects that name none go.
	namespace string
	// ownsNamespace: the run owns namespace, so objects there need no
	// owner check (see owned).
	ownsNamespace bool
	// labels are put on every object applied (a shared cluster's run
	// labels; nil otherwise).
	labels map[string]string
}

// NewClients makes the clients of a cluster.
func NewClients(c *cluster.Cluster) (*Clients, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, err
	}
	d, err := c.Dynamic()
	if err != nil {
		return nil, err
	}
	return &Clients{Clientset: cs, dyn: d.Client, mapper: d.Mapper, namespace: c.Namespace(), ownsNamespace: c.OwnsNamespace(), labels: c.RunLabels()}, nil
}

// resource finds the REST resource of an object kind ("Deployment", or
// "apps/v1" + "Deployment" when apiVersion is known).
func (a *Clients) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	ri, _, err := a.resourceScoped(apiVersion, kind, namespace)
	return ri, err
}

// resourceScoped is resource, also telling whether the kind is namespaced.
func (a *Clients) resourceScoped(apiVersion, kind, namespace string) (dynamic.ResourceInterface, bool, error) {
	var gk schema.GroupKind
	var versions []string
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, false, err
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
			return nil, false, fmt.Errorf("find resource for kind %q: %w", kind, err)
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = a.namespace
		}
		if namespace == "" {
			namespace = "default"
		}
		return a.dyn.Resource(m.Resource).Namespace(namespace), true, nil
	}
	return a.dyn.Resource(m.Resource), false, nil
}

// updateNode reads, changes and writes a node, retrying on conflicts,
// and waits until the lab's view shows it as seen says (nodeSeen).
func updateNode(ctx context.Context, env Env, name string, change func(*corev1.Node), seen func(assertions.Node) bool) error {
	a, err := env.Clients()
	if err != nil {
		return err
	}
	for {
		n, err := a.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		change(n)
		_, err = a.Clientset.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: fieldManager})
		if err == nil {
			return nodeSeen(ctx, env.View(), name, seen)
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("update node %s: %w", name, err)
		}
	}
}

// nodeSettle and nodeSeenLimit bound how long a node write waits to be
// seen (see nodeSeen).
const (
	nodeSettle    = 250 * time.Millisecond
	nodeSeenLimit = 5 * time.Second
)

// nodeSeen waits until the lab's watch-fed view shows the node as seen
// says it should be, then nodeSettle more. The scheduler and the
// controllers see a node through informers of their own, as the view
// does: a pod applied 40 ms after an untaint was scheduled as if the taint
// were still there (lab 05, in CI on a loaded machine). Once the view has
// the change, the next step sees it, and the settle gives the components'
// watches the same delivery. A view that does not show it within
// nodeSeenLimit is no error: the write itself succeeded.
func nodeSeen(ctx context.Context, v View, name string, seen func(assertions.Node) bool) error {
	if v == nil || seen == nil {
		return nil
	}
	limit := time.Now().Add(nodeSeenLimit)
	for {
		if got, _ := v.Node(ctx, name); got.Exists && seen(got) {
			return Sleep(ctx, nodeSettle)
		}
		if time.Now().After(limit) {
			return nil
		}
		if err := Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}
