package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/clustertest"
)

func TestScaleMultipliesTheNodesHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		factor       int
		lease, grace time.Duration
	}{
		{1, 40 * time.Second, 50 * time.Second},
		{5, 200 * time.Second, 250 * time.Second},
		{0, 40 * time.Second, 50 * time.Second}, // unset: a kubelet's
	} {
		var got cluster.Topology
		stop := errors.New("stop before booting")
		newBackend := func(_ string, topo cluster.Topology) (cluster.Backend, error) {
			got = topo
			return nil, stop
		}
		spec := ScaleSpec{Nodes: 1000, Pods: 10, Heartbeat: tc.factor}
		res, err := Scale(context.Background(), newBackend, "embedded", spec, func(string) {})
		if !errors.Is(err, stop) {
			t.Fatalf("factor %d: %v, want the backend's error", tc.factor, err)
		}
		if l, g := got.Timings.NodeLeaseDuration.Duration, got.Timings.NodeMonitorGracePeriod.Duration; l != tc.lease || g != tc.grace {
			t.Errorf("factor %d: node lease %s, grace %s; want %s and %s", tc.factor, l, g, tc.lease, tc.grace)
		}
		if errs := got.Timings.Validate(); len(errs) > 0 {
			t.Errorf("factor %d: timings refused: %v", tc.factor, errs)
		}
		if res.Grace != tc.grace.Seconds() || res.Heartbeat != max(1, tc.factor) {
			t.Errorf("factor %d: result says grace %.0f s, factor %d", tc.factor, res.Grace, res.Heartbeat)
		}
	}
}

func TestWriteScaleSaysWhatItDidNotMeasure(t *testing.T) {
	rs := []ScaleResult{
		{Nodes: 10, Pods: 20, Heartbeat: 1, NodeDown: 51.25, Grace: 50},
		{Nodes: 10, Pods: 20, Heartbeat: 5, Grace: 250},
	}
	var out bytes.Buffer
	if err := WriteScale(&out, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "HEARTBEAT x") {
		t.Fatalf("no heartbeat column:\n%s", out.String())
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[1]), "51.25 (50)") {
		t.Errorf("factor 1 row %q: want the measured node down and its grace", lines[1])
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[2]), "- (250)") {
		t.Errorf("factor 5 row %q: want no node down measure, and the grace", lines[2])
	}
}

func TestPSSSamplerStops(t *testing.T) {
	ctx := context.Background()
	b := clustertest.New(cluster.Topology{}, nil, clustertest.Faults{})
	s := &pssSampler{b: b}
	s.start(ctx, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	s.sample(ctx)
	// The fake's components have no process, so nothing is held; what
	// is checked is that the loop ends, and that stopping twice is safe.
	if p := s.stop(); p != 0 {
		t.Errorf("peak %.1f MiB of no process", p)
	}
	if p := s.stop(); p != 0 {
		t.Errorf("second stop: %.1f", p)
	}
}

// With no pods, a scale run measures the nodes and ends: before, it
// waited ten minutes for a pod to run and then failed.
func TestScaleWithoutPodsMeasuresTheNodesOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var fake *clustertest.Fake
	newBackend := func(_ string, topo cluster.Topology) (cluster.Backend, error) {
		fake = clustertest.New(topo, nil, clustertest.Faults{})
		return fake, nil
	}
	var said []string
	res, err := Scale(ctx, newBackend, "embedded", ScaleSpec{Nodes: 3, Pods: 0, Heartbeat: 5}, func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatalf("scale with no pods: %v", err)
	}
	if res.Nodes != 3 || res.Pods != 0 || res.PodsRunning != 0 || res.PodsPerSecond != 0 {
		t.Errorf("result %+v: want 3 nodes and no pod measure", res)
	}
	if !fake.Removed() {
		t.Error("the cluster was not taken down")
	}
	if len(said) == 0 || !strings.Contains(said[len(said)-1], "no pods to create") {
		t.Errorf("progress %q: want it to say that no pods are created", said)
	}
}
