package assertions

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// liveOverPods is a Live whose informers serve n pods in default (half
// of them app=web, all Running) from client-go's fake clientset: the
// same informer caches, listers and conversions a cluster's Live uses,
// without a cluster.
func liveOverPods(b *testing.B, n int) *Live {
	b.Helper()
	cs := fake.NewClientset()
	for i := range n {
		app := "web"
		if i%2 == 1 {
			app = "batch"
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", app, i), Namespace: "default", ResourceVersion: "1", UID: types.UID(fmt.Sprint(i)), Labels: map[string]string{"app": app, "pod-template-hash": "7f9c"}},
			Spec:       corev1.PodSpec{NodeName: fmt.Sprintf("worker-%d", i%1000+1), Containers: []corev1.Container{{Name: "app", Image: "kubelab/http:dev"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.244.%d.%d", i/250, i%250+2),
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		if err := cs.Tracker().Add(p); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	l := &Live{factory: informers.NewSharedInformerFactory(cs, 0), changed: make(chan struct{}, 1), stop: cancel}
	l.factory.Core().V1().Pods().Informer()
	l.factory.Start(ctx.Done())
	l.factory.WaitForCacheSync(ctx.Done())
	return l
}

// noCluster is a Live without the cluster it would ask for its run's
// namespace: expressions see "default".
type noCluster struct{ *Live }

func (noCluster) Namespace() string { return "" }

// BenchmarkExprOn10kPods: `all(pods("app=web"), .phase == "Running")` on
// a cluster of 10,000 pods (5,000 of them app=web), read from the
// informer cache. Target: under 50 ms an evaluation.
func BenchmarkExprOn10kPods(b *testing.B) {
	l := liveOverPods(b, 10000)
	for _, src := range []string{
		`all(pods("app=web"), .phase == "Running")`,
		`len(pods("app=web")) == 5000`,
		`len(filter(pods(""), .ready)) == 10000`,
	} {
		c, err := Compile(src, nil, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				ok, err := Holds(ctx, c, noCluster{l}, nil)
				if err != nil || !ok {
					b.Fatalf("%s: %v, %v", src, ok, err)
				}
			}
		})
	}
}
