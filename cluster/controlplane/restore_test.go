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
	site := controlplane.Site{
		Path: func(f string) string { return "/pki/" + f },
		Etcd: func(m string) controlplane.EtcdURLs {
			return controlplane.EtcdURLs{AdvertiseClient: "https://" + m + ":2379", AdvertisePeer: "https://" + m + ":2380", DataDir: "/var/lib/etcd"}
		},
		APIServer: func(string) controlplane.Serving { return controlplane.Serving{} },
		Serving:   func(string) controlplane.Serving { return controlplane.Serving{} },
	}
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

func value(args []string, flag string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
