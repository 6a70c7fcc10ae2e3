package controlplane_test

import (
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/controlplane"
)

// TestEtcdRestoreArgsMatchThePlan: a member restored from a snapshot gets
// the name, peer URL and initial cluster it runs with, so the restored
// data directory boots as that member; only the token is new.
func TestEtcdRestoreArgsMatchThePlan(t *testing.T) {
	topo := cluster.Topology{Name: "c", Etcd: 3}.WithDefaults()
	site := testSite()
	var member controlplane.Component
	for _, c := range controlplane.Components(topo, site) {
		if c.Name == "etcd-2" {
			member = c
		}
	}
	args := controlplane.EtcdRestoreArgs(topo, site, "etcd-2", "/snap.db", "/fresh", "new-token")
	if !slices.Equal(args[:3], []string{"snapshot", "restore", "/snap.db"}) {
		t.Errorf("args start %q, want snapshot restore /snap.db", args[:3])
	}
	for _, flag := range []string{"--name", "--initial-cluster", "--initial-advertise-peer-urls"} {
		if got, want := value(args, flag), value(member.Args, flag); got == "" || got != want {
			t.Errorf("%s = %q, the member runs with %q", flag, got, want)
		}
	}
	if got := value(args, "--initial-cluster-token"); got != "new-token" || got == value(member.Args, "--initial-cluster-token") {
		t.Errorf("--initial-cluster-token = %q, want the new token", got)
	}
	if value(args, "--data-dir") != "/fresh" || !slices.Contains(args, "--mark-compacted") || value(args, "--bump-revision") == "" {
		t.Errorf("want --data-dir=/fresh, --bump-revision and --mark-compacted: %q", args)
	}
}

// TestLoneEtcdMemberElectsAtOnce: an etcd cluster of one runs with a
// 10 ms tick (its first election waits 10-100 ms, not up to 1 s); members
// of 3 keep upstream's timings, which the election labs are about.
func TestLoneEtcdMemberElectsAtOnce(t *testing.T) {
	site := testSite()
	for _, tc := range []struct {
		etcd                int
		heartbeat, election string
	}{{1, "10", "100"}, {3, "", ""}} {
		topo := cluster.Topology{Name: "c", Etcd: tc.etcd}.WithDefaults()
		for _, c := range controlplane.Components(topo, site) {
			if c.Role != cluster.RoleEtcd {
				continue
			}
			if h, e := value(c.Args, "--heartbeat-interval"), value(c.Args, "--election-timeout"); h != tc.heartbeat || e != tc.election {
				t.Errorf("%s of %d: --heartbeat-interval=%q --election-timeout=%q, want %q and %q", c.Name, tc.etcd, h, e, tc.heartbeat, tc.election)
			}
		}
	}
}

// testSite places every member at its own name.
func testSite() controlplane.Site {
	return controlplane.Site{
		Path: func(f string) string { return "/pki/" + f },
		Etcd: func(m string) controlplane.EtcdURLs {
			return controlplane.EtcdURLs{AdvertiseClient: "https://" + m + ":2379", AdvertisePeer: "https://" + m + ":2380", DataDir: "/var/lib/etcd"}
		},
		APIServer: func(string) controlplane.Serving { return controlplane.Serving{} },
		Serving:   func(string) controlplane.Serving { return controlplane.Serving{} },
	}
}

func value(args []string, flag string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// TestStackedAPIServerTalksToItsOwnMember: in a stacked topology each
// apiserver names the etcd member of its own control-plane node only, as
// kubeadm's stacked etcd does; in the external one, every member.
func TestStackedAPIServerTalksToItsOwnMember(t *testing.T) {
	site := testSite()
	for _, stacked := range []bool{false, true} {
		topo := cluster.Topology{Name: "c", Etcd: 3, Stacked: stacked}.WithDefaults()
		if !stacked {
			topo.APIServers = 3
		}
		n := 0
		for _, c := range controlplane.Components(topo, site) {
			if c.Role != cluster.RoleAPIServer {
				continue
			}
			n++
			want := "https://etcd-1:2379,https://etcd-2:2379,https://etcd-3:2379"
			if stacked {
				want = "https://etcd-" + strings.TrimPrefix(c.Name, "kube-apiserver-") + ":2379"
			}
			if got := value(c.Args, "--etcd-servers"); got != want {
				t.Errorf("stacked=%v: %s --etcd-servers=%s, want %s", stacked, c.Name, got, want)
			}
		}
		if n != 3 {
			t.Errorf("stacked=%v: %d apiservers, want 3", stacked, n)
		}
	}
}
