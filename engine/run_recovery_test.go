package engine

import (
	"strings"
	"testing"
	"time"
)

// ev is a synthetic timeline event at ms milliseconds.
func ev(ms int, kind, subject, detail string) TimelineEvent {
	return TimelineEvent{At: time.Duration(ms) * time.Millisecond, Kind: kind, Subject: subject, Detail: detail}
}

func describe(rs []Recovery) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Describe)
	}
	return strings.Join(out, "\n")
}

func TestRecoveriesPairFaultsWithTheirOwnRecovery(t *testing.T) {
	cases := []struct {
		name string
		evs  []TimelineEvent
		want []string
	}{{
		// The etcd election ends just after an unrelated scheduler kill:
		// it is the etcd kill's recovery, not the scheduler's.
		name: "etcd leader after a scheduler kill",
		evs: []TimelineEvent{
			ev(0, EventLease, "kube-scheduler", "held by kube-scheduler-1"),
			ev(1000, EventFault, "kill", "etcd-leader=etcd-1"),
			ev(1100, EventEtcdLeader, "etcd", "no leader"),
			ev(1500, EventFault, "kill", "kube-scheduler-1"),
			ev(1503, EventEtcdLeader, "etcd", "etcd-2 is leader"),
			ev(4000, EventLease, "kube-scheduler", "held by kube-scheduler-2"),
		},
		want: []string{
			"kill etcd-leader=etcd-1 -> new etcd leader (etcd-2) after 503ms",
			"kill kube-scheduler-1 -> kube-scheduler lease moved (kube-scheduler-2) after 2.5s",
		},
	}, {
		// An empty holder is a release, not a recovery; nor is a lease
		// move the doing of an etcd member.
		name: "released lease after an etcd start",
		evs: []TimelineEvent{
			ev(0, EventFault, "stop", "etcd-2"),
			ev(10, EventFault, "stop", "etcd-3"),
			ev(5000, EventFault, "start", "etcd-3"),
			ev(5300, EventEtcdLeader, "etcd", "etcd-1 is leader"),
			ev(6178, EventLease, "kube-scheduler", "released"),
			ev(6500, EventLease, "kube-scheduler", "held by kube-scheduler-2"),
		},
		want: []string{"start etcd-3 -> new etcd leader (etcd-1) after 300ms"},
	}, {
		name: "kill of a scheduler that does not hold the lease",
		evs: []TimelineEvent{
			ev(0, EventLease, "kube-controller-manager", "held by kube-controller-manager-1"),
			ev(100, EventFault, "stop", "kube-controller-manager-1"),
			ev(200, EventLease, "kube-controller-manager", "released"),
			ev(300, EventFault, "kill", "kube-controller-manager-3"),
			ev(900, EventLease, "kube-controller-manager", "held by kube-controller-manager-2"),
		},
		want: []string{"stop kube-controller-manager-1 -> kube-controller-manager lease moved (kube-controller-manager-2) after 800ms"},
	}, {
		name: "node faults own their node and the endpoints",
		evs: []TimelineEvent{
			ev(0, EventFault, "kill", "worker-2"),
			ev(50, EventFault, "kill", "kube-apiserver-1"),
			ev(60, EventFault, "kill", "etcd-3"),
			ev(8000, EventNode, "worker-2", "Ready=False"),
			ev(8100, EventNode, "worker-1", "Ready=False"),
			ev(20000, EventEndpointsWho, "web", "all 3 ready again"),
			ev(21000, EventFault, "start", "worker-2/kubelet"),
			ev(23000, EventNode, "worker-2", "Ready=True"),
		},
		want: []string{
			"kill worker-2 -> worker-2 Ready=False after 8s",
			"kill worker-2 -> web endpoints whole again after 20s",
			"start worker-2/kubelet -> worker-2 Ready=True after 2s",
		},
	}, {
		name: "one recovery of each kind per fault",
		evs: []TimelineEvent{
			ev(0, EventFault, "kill", "etcd-leader=etcd-1"),
			ev(400, EventEtcdLeader, "etcd", "etcd-2 is leader"),
			ev(900, EventEtcdLeader, "etcd", "etcd-3 is leader"),
		},
		want: []string{"kill etcd-leader=etcd-1 -> new etcd leader (etcd-2) after 400ms"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := describe(Recoveries(c.evs))
			if want := strings.Join(c.want, "\n"); got != want {
				t.Errorf("recoveries:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestLeaseDetail(t *testing.T) {
	for id, want := range map[string]string{
		"kube-scheduler-1_6b1f": "held by kube-scheduler-1",
		"":                      "released",
		"_x":                    "released",
	} {
		if got := leaseDetail(id); got != want {
			t.Errorf("leaseDetail(%q) = %q, want %q", id, got, want)
		}
	}
}
