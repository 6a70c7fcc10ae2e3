package ui_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/observe"
	"kubelab.dev/kubelab/ui"
)

// TestNodesPanelOnDocker is the nodes panel on real nodes: on a docker
// cluster, a Pod and a Service created through the apiserver show up in
// the page's machinery as the worker's CRI sandbox (the pause process
// holding the pod's network namespace) and container, and as the nat
// chain kube-proxy wrote for the Service, with the pod as its endpoint.
func TestNodesPanelOnDocker(t *testing.T) {
	t.Parallel() // a cluster and a browser that mostly wait: two at once
	enginetest.NeedDocker(t, "the nodes panel on real nodes")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	sess, err := enginetest.RunnerOn(t, "docker").StartFor(ctx, "ui-nodes", cluster.Topology{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := sess.Close(context.WithoutCancel(ctx), false); err != nil {
			t.Error(err)
		}
	})
	srv, err := ui.New(ui.Options{Session: sess, Token: "s3cret", Patience: 200 * time.Millisecond, Every: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()

	cs, err := sess.Cluster().Client()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "kubelab/http:dev", ImagePullPolicy: corev1.PullNever}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stream := events(t, sctx, ln.Addr().String())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		m := stream().Machinery
		problem := webShown(m)
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the pod and its Service inside the node: %s\nnodes: %+v\nnotes: %v", problem, m.Nodes, m.Notes)
		}
	}
}

// webShown says what of pod default/web and Service default/web the
// machinery does not show yet ("" once it shows all of it).
func webShown(m ui.Machinery) string {
	i := slices.IndexFunc(m.Nodes, func(n ui.NodeInside) bool {
		return slices.ContainsFunc(n.CRI.Sandboxes, func(s observe.Sandbox) bool { return s.Pod == "web" && s.Namespace == "default" })
	})
	if i < 0 {
		return fmt.Sprintf("no node has the pod's sandbox (%d nodes)", len(m.Nodes))
	}
	n := m.Nodes[i]
	if n.Error != "" {
		return "node error: " + n.Error
	}
	if !slices.ContainsFunc(n.CRI.Containers, func(c observe.CRIContainer) bool {
		return c.Pod == "web" && c.Name == "web" && c.State == "CONTAINER_RUNNING" && c.PID > 0
	}) {
		return "the pod's container is not running in " + n.Name
	}
	sv, ok := n.IPTables.Services["default/web"]
	if !ok || sv.Chain == "" || len(sv.Endpoints) != 1 {
		return fmt.Sprintf("kube-proxy's chain for default/web in %s: %+v", n.Name, sv)
	}
	return ""
}
