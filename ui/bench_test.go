package ui_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
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
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/events", nil)
	req.Header.Set("Cookie", "kubelab_ui=s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	events.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() {
		for events.Scan() {
			if strings.HasPrefix(events.Text(), "data: ") {
				return
			}
		}
		b.Fatalf("the stream ended: %v", events.Err())
	}
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
