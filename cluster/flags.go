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

// NodeLeaseSeconds is the node lease a kubelet (or kwok) renews, in
// seconds: the nodeLeaseDuration timing, else, when the grace period is
// shortened below upstream's 40 s lease, the grace period (at least 4 s),
// else 40. A node renews every lease/4, so with a shortened grace and the
// default lease a healthy node renews only as often as the grace period
// and goes Ready=Unknown whenever a renewal is late.
func (t Timings) NodeLeaseSeconds() int {
	if d := t.NodeLeaseDuration.Duration; d > 0 {
		return max(1, int(d/time.Second))
	}
	if g := t.NodeMonitorGracePeriod.Duration; g > 0 && g < 40*time.Second {
		return max(4, int(g/time.Second))
	}
	return 40
}
