package docker

import (
	"testing"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/golden"
)

// TestControlPlaneGolden shows the arguments this backend gives the
// shared plan's components; cluster/controlplane checks they match the
// embedded backend's apart from addresses and paths.
func TestControlPlaneGolden(t *testing.T) {
	b := &Backend{topo: controlplane.GoldenTopology()}
	golden.Check(t, "testdata/controlplane.golden", controlplane.Render(controlplane.Components(b.topo, b.site())))
}

func TestHAProxyConfigFailsOverFast(t *testing.T) {
	golden.Check(t, "testdata/haproxy.cfg", haproxyConfig([]string{"kube-apiserver-1", "kube-apiserver-2"}))
}
