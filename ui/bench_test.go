package ui_test

import (
	"context"
	"syscall"
	"testing"
	"time"
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
