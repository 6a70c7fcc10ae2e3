package cluster

import (
	"strings"
	"testing"
	"time"
)

func TestTopologyValidate(t *testing.T) {
	d := func(v time.Duration) Duration { return Duration{Duration: v} }
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	for _, tc := range []struct {
		name     string
		topo     Topology
		explicit func(string) bool
		want     []string // substrings, one per error; none = valid
	}{
		{name: "defaults", topo: Topology{Name: "x"}, explicit: none},
		{name: "unset counts are defaults", topo: Topology{Name: "x"}, explicit: all,
			want: []string{"etcd: want 1, 3 or 5 members", "apiservers: want 1 to 5, got 0", "schedulers: want 1 to 5, got 0",
				"controllerManagers: want 1 to 5, got 0", "workers: want 1 to 4000 nodes, got 0"}},
		{name: "explicit etcd 0", topo: Topology{Name: "x"}, explicit: func(f string) bool { return f == "etcd" },
			want: []string{"etcd: want 1, 3 or 5 members, got 0 (an odd number, for a Raft quorum)"}},
		{name: "even etcd", topo: Topology{Name: "x", Etcd: 2}, explicit: none, want: []string{"etcd: want 1, 3 or 5 members, got 2 (an odd number, for a Raft quorum)"}},
		{name: "stacked counts follow etcd", topo: Topology{Name: "x", Etcd: 3, Stacked: true}, explicit: none},
		{name: "stacked with fewer apiservers", topo: Topology{Name: "x", Etcd: 3, APIServers: 2, Stacked: true}, explicit: none,
			want: []string{"stacked: each control-plane node runs one etcd member, one apiserver, one scheduler and one controller-manager: want apiservers, schedulers and controllerManagers equal to etcd (3) or unset, got 2, 3 and 3"}},
		{name: "negative workers", topo: Topology{Name: "x", Workers: -1}, explicit: none, want: []string{"workers: want 1 to 4000 nodes, got -1"}},
		{name: "negative apiservers", topo: Topology{Name: "x", APIServers: -2}, explicit: none, want: []string{"apiservers: want 1 to 5, got -2"}},
		{name: "too many workers", topo: Topology{Name: "x", Workers: 4001}, explicit: none, want: []string{"nodes: want at most 4000, got 4001"}},
		{name: "shortened leader election", topo: Topology{Name: "x", Timings: Timings{LeaseDuration: d(4 * time.Second), RenewDeadline: d(3 * time.Second), RetryPeriod: d(time.Second)}}, explicit: none},
		{name: "1ms lease", topo: Topology{Name: "x", Timings: Timings{LeaseDuration: d(time.Millisecond), RenewDeadline: d(time.Millisecond * 2 / 3), RetryPeriod: d(time.Millisecond / 4)}}, explicit: none,
			want: []string{"timings.leaseDuration: want at least 1s, got 1ms", "timings.renewDeadline: want at least 1s", "timings.retryPeriod: want at least 100ms"}},
		{name: "renew not shorter than lease", topo: Topology{Name: "x", Timings: Timings{LeaseDuration: d(2 * time.Second), RenewDeadline: d(3 * time.Second), RetryPeriod: d(time.Second)}}, explicit: none,
			want: []string{"timings: renewDeadline (3s) must be shorter than leaseDuration (2s)"}},
		{name: "lease alone, shorter than the default renew", topo: Topology{Name: "x", Timings: Timings{LeaseDuration: d(4 * time.Second)}}, explicit: none,
			want: []string{"timings: renewDeadline (10s) must be shorter than leaseDuration (4s) (an unset timing is its upstream default"}},
		{name: "renew within jitter of retry", topo: Topology{Name: "x", Timings: Timings{LeaseDuration: d(4 * time.Second), RenewDeadline: d(3 * time.Second), RetryPeriod: d(3 * time.Second)}}, explicit: none,
			want: []string{"timings: renewDeadline (3s) must be longer than 1.2 x retryPeriod (3s)"}},
		{name: "negative grace", topo: Topology{Name: "x", Timings: Timings{NodeMonitorGracePeriod: d(-5 * time.Second)}}, explicit: none,
			want: []string{"timings.nodeMonitorGracePeriod: want a positive duration (or none for the upstream default), got -5s"}},
		{name: "grace not above the monitor period", topo: Topology{Name: "x", Timings: Timings{NodeMonitorGracePeriod: d(time.Second)}}, explicit: none,
			want: []string{"timings.nodeMonitorGracePeriod: want more than the node monitor period (1s), got 1s"}},
		{name: "sub-second tolerations", topo: Topology{Name: "x", Timings: Timings{TolerationSeconds: d(1500 * time.Millisecond), NodeLeaseDuration: d(500 * time.Millisecond)}}, explicit: none,
			want: []string{"timings.nodeLeaseDuration: want whole seconds, at least 1s, got 500ms", "timings.tolerationSeconds: want whole seconds, at least 1s, got 1.5s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.topo.ValidateExplicit(tc.explicit)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tc.want), errs)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

// TestControlPlaneNodes: a stacked topology's control-plane nodes each
// hold the four components of one index; an external one has none.
func TestControlPlaneNodes(t *testing.T) {
	if n := (Topology{Etcd: 3}).WithDefaults().ControlPlaneNodes(); n != nil {
		t.Errorf("external topology: %v, want none", n)
	}
	n := Topology{Etcd: 3, Stacked: true}.WithDefaults().ControlPlaneNodes()
	if len(n) != 3 || strings.Join(n["control-plane-2"], " ") != "etcd-2 kube-apiserver-2 kube-controller-manager-2 kube-scheduler-2" {
		t.Errorf("stacked topology of 3: %v", n)
	}
}
