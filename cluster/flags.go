package cluster

import (
	"strconv"
	"time"
)

// LeaderElectionFlags are the kube-scheduler and kube-controller-manager
// flags for these timings (leader election on; unset timings keep the
// upstream defaults).
func (t Timings) LeaderElectionFlags() []string {
	a := []string{"--leader-elect=true"}
	if d := t.LeaseDuration.Duration; d > 0 {
		a = append(a, "--leader-elect-lease-duration="+d.String())
	}
	if d := t.RenewDeadline.Duration; d > 0 {
		a = append(a, "--leader-elect-renew-deadline="+d.String())
	}
	if d := t.RetryPeriod.Duration; d > 0 {
		a = append(a, "--leader-elect-retry-period="+d.String())
	}
	return a
}

// APIServerFlags are the kube-apiserver flags for these timings.
func (t Timings) APIServerFlags() []string {
	var a []string
	if d := t.TolerationSeconds.Duration; d > 0 {
		s := strconv.Itoa(int(d / time.Second))
		a = append(a, "--default-not-ready-toleration-seconds="+s, "--default-unreachable-toleration-seconds="+s)
	}
	if d := t.EtcdCompactionInterval.Duration; d > 0 {
		a = append(a, "--etcd-compaction-interval="+d.String())
	}
	return a
}

// ControllerManagerFlags are the kube-controller-manager flags for these
// timings, leader election included. The node lifecycle controller checks
// the nodes every second (upstream: 5 s), grace period or not: a node
// goes NotReady within a second of its grace, and a taint it set from a
// node it first saw NotReady at boot is lifted within a second, not five.
func (t Timings) ControllerManagerFlags() []string {
	a := t.LeaderElectionFlags()
	if d := t.NodeMonitorGracePeriod.Duration; d > 0 {
		a = append(a, "--node-monitor-grace-period="+d.String())
	}
	return append(a, "--node-monitor-period="+nodeMonitorPeriod.String())
}
