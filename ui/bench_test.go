package ui_test

import (
	"context"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine/enginetest"
	"kubelab.dev/kubelab/ui"
)

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkChangeToPage measures, on a fake cluster, the time from a
// change of the cluster to the page's event stream carrying the new
// evaluation (the view's own share: the 300ms the changes are let to
// settle, the evaluation, the push; a real cluster adds its watch's
// latency), and the server's CPU while nothing changes (idle-cpu-%,
// over 3s of its evaluations at least every 5s).
//
//	go test ./ui -run '^$' -bench ChangeToPage -benchtime 10x
func BenchmarkChangeToPage(b *testing.B) {
	addr, fc := serve(b)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	stream := events(b, ctx, addr)
	next := func() { stream() }
	next() // the first evaluation
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fc.Set(webPods(1 + i%2))
		next()
	}
	b.StopTimer()
	idle := 3 * time.Second
	before := cpuTime()
	time.Sleep(idle)
	b.ReportMetric(100*float64(cpuTime()-before)/float64(idle), "idle-cpu-%")
}

// BenchmarkChangeToPageOnARealCluster is BenchmarkChangeToPage end to
// end on a real embedded cluster: each iteration creates a Pod through
// the apiserver and waits until the page's event stream draws it on the
// timeline as Running: the timeline's "pods Running" lane counts one
// more (the apiserver, the scheduler, the kwok node's Running, the watch,
// the 300ms settle, the evaluation with every machinery panel, the push).
//
//	KUBELAB_BIN=$PWD/bin/kubelab go test ./ui -run '^$' -bench ChangeToPageOnARealCluster -benchtime 5x
func BenchmarkChangeToPageOnARealCluster(b *testing.B) {
	r := enginetest.Runner(b)
	r.Progress = nil
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	sess, err := r.StartFor(ctx, "ui-bench", cluster.Topology{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = sess.Close(context.WithoutCancel(ctx), false) }()
	srv, err := ui.New(ui.Options{Session: sess, Token: "s3cret", Patience: 200 * time.Millisecond, Every: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	cs, err := sess.Cluster().Client()
	if err != nil {
		b.Fatal(err)
	}
	stream := events(b, ctx, ln.Addr().String())
	stream() // the first evaluation
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench-%d", i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kubelab/http:dev"}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprintf(`<text class="count" %s>%d</text>`, `[^>]*`, i+1)
		for ev := stream(); !regexp.MustCompile(want).MatchString(ev.Machinery.Timeline); ev = stream() {
			if ctx.Err() != nil {
				b.Fatal("the page never drew", name)
			}
		}
	}
}
