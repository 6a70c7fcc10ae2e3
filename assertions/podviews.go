package assertions

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// podViews keeps each pod's expression view, converted once per
// resourceVersion. On a cluster of 10,000 pods, an expression over
// pods(...) would otherwise convert (and allocate) every pod at every
// evaluation, and a wait evaluates at every change of the cluster.
type podViews struct {
	mu sync.RWMutex
	m  map[types.UID]podView
}

type podView struct {
	rv  string
	pod Pod
}

// get is p's view, converted now if p changed since the last time.
func (v *podViews) get(p *corev1.Pod) Pod {
	v.mu.RLock()
	pv, ok := v.m[p.UID]
	v.mu.RUnlock()
	if ok && pv.rv == p.ResourceVersion && p.ResourceVersion != "" {
		return pv.pod
	}
	out := toPod(p)
	v.mu.Lock()
	if v.m == nil {
		v.m = map[types.UID]podView{}
	}
	v.m[p.UID] = podView{rv: p.ResourceVersion, pod: out}
	v.mu.Unlock()
	return out
}

// forget drops the view of a deleted pod (obj as an informer's delete
// handler gets it).
func (v *podViews) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		v.mu.Lock()
		delete(v.m, p.UID)
		v.mu.Unlock()
	}
}
