package docker

import (
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster/controlplane"
)

// TestNodeImageHashIsDeterministic: the same inputs always name the same
// node image (ranging over a map made about half of the runs rebuild it),
// and any change of a file's name or content names another.
func TestNodeImageHashIsDeterministic(t *testing.T) {
	files := map[string]string{
		"Dockerfile.node": "FROM base", "node-init.sh": "#!/bin/sh", "containerd.toml": "version = 2", "cni.template": "{}",
		"images/kubelab-pause-dev.tar": "pause", "images/kubelab-http-dev.tar": "http", "images/other.tar": "other",
	}
	first := nodeImageHash(files, "kubelab/node-base:abc", "binhash")
	for i := 0; i < 200; i++ {
		copied := map[string]string{}
		for k, v := range files {
			copied[k] = v
		}
		if h := nodeImageHash(copied, "kubelab/node-base:abc", "binhash"); h != first {
			t.Fatalf("hash %d of the same inputs = %s, first was %s", i, h, first)
		}
	}
	swapped := map[string]string{}
	for k, v := range files {
		swapped[k] = v
	}
	swapped["images/kubelab-pause-dev.tar"], swapped["images/kubelab-http-dev.tar"] = "http", "pause"
	if nodeImageHash(swapped, "kubelab/node-base:abc", "binhash") == first {
		t.Error("swapping two files' contents kept the hash")
	}
	if nodeImageHash(files, "kubelab/node-base:abd", "binhash") == first || nodeImageHash(files, "kubelab/node-base:abc", "other") == first {
		t.Error("another base or binary kept the hash")
	}
	w1 := nodeImageHash(files, "kubelab/node-base:abc", "binhash", "kubelab/pause:3.10", "p1")
	if w1 == first || nodeImageHash(files, "kubelab/node-base:abc", "binhash", "kubelab/pause:3.10", "p2") == w1 {
		t.Error("another workload image kept the hash")
	}
}

// TestNodeRefusesTheServiceNetwork: node-init.sh refuses forwarded
// packets still addressed to the cluster's Service network, whichever
// range the control plane's plan gives it.
func TestNodeRefusesTheServiceNetwork(t *testing.T) {
	b, err := files.ReadFile("files/node-init.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "iptables -A FORWARD -d " + controlplane.ServiceCIDR + " -j REJECT"; !strings.Contains(string(b), want) {
		t.Errorf("node-init.sh lacks %q", want)
	}
}
