package cluster

import (
	"reflect"
	"testing"
	"time"
)

func TestTimingsFlags(t *testing.T) {
	d := func(v time.Duration) Duration { return Duration{Duration: v} }
	tm := Timings{LeaseDuration: d(4 * time.Second), RetryPeriod: d(time.Second), NodeMonitorGracePeriod: d(8 * time.Second),
		TolerationSeconds: d(10 * time.Second), EtcdCompactionInterval: d(5 * time.Second)}
	if got, want := tm.ControllerManagerFlags(), []string{"--leader-elect=true", "--leader-elect-lease-duration=4s",
		"--leader-elect-retry-period=1s", "--node-monitor-grace-period=8s", "--node-monitor-period=1s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("controller-manager flags = %v, want %v", got, want)
	}
	if got, want := tm.APIServerFlags(), []string{"--default-not-ready-toleration-seconds=10",
		"--default-unreachable-toleration-seconds=10", "--etcd-compaction-interval=5s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("apiserver flags = %v, want %v", got, want)
	}
	if got := (Timings{}).LeaderElectionFlags(); !reflect.DeepEqual(got, []string{"--leader-elect=true"}) {
		t.Errorf("defaults = %v", got)
	}
}

func TestNodeLeaseSeconds(t *testing.T) {
	d := func(v time.Duration) Duration { return Duration{Duration: v} }
	for _, c := range []struct {
		tm   Timings
		want int
	}{
		{Timings{}, 40},
		{Timings{NodeMonitorGracePeriod: d(10 * time.Second)}, 10},
		{Timings{NodeMonitorGracePeriod: d(2 * time.Second)}, 4},
		{Timings{NodeMonitorGracePeriod: d(50 * time.Second)}, 40},
		{Timings{NodeMonitorGracePeriod: d(10 * time.Second), NodeLeaseDuration: d(20 * time.Second)}, 20},
	} {
		if got := c.tm.NodeLeaseSeconds(); got != c.want {
			t.Errorf("%+v: lease = %d s, want %d", c.tm, got, c.want)
		}
	}
}
