package controlplane

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestCreateSendsADroppedRequestAgain: a create whose connection dropped
// (here after the object was stored) is sent again and finds the object;
// an object that exists is no error; another error is returned at once,
// named.
func TestCreateSendsADroppedRequestAgain(t *testing.T) {
	cs := fake.NewClientset()
	drops := 1
	cs.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if drops > 0 {
			drops--
			obj := a.(k8stesting.CreateAction).GetObject()
			_ = cs.Tracker().Create(a.GetResource(), obj, a.GetNamespace())
			return true, nil, &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/api/v1/namespaces/kube-system/configmaps", Err: io.EOF}
		}
		return false, nil, nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "kube-system"}}
	create := func(ctx context.Context) (any, error) {
		return cs.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{})
	}
	if err := Create(t.Context(), "configmap x", create); err != nil {
		t.Fatalf("after a dropped connection: %v", err)
	}
	if drops != 0 {
		t.Fatal("the drop was never simulated")
	}
	if err := Create(t.Context(), "configmap x", create); err != nil {
		t.Errorf("an object that exists: %v", err)
	}
	calls := 0
	err := Create(t.Context(), "configmap y", func(context.Context) (any, error) {
		calls++
		return nil, errors.New("forbidden")
	})
	if err == nil || !strings.Contains(err.Error(), "create configmap y: forbidden") || calls != 1 {
		t.Errorf("another error: %v after %d calls, want it named after 1", err, calls)
	}
}
