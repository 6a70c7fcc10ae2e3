package embedded

import (
	"testing"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/golden"
)

// TestControlPlaneGolden shows the arguments this backend gives the
// shared plan's components; cluster/controlplane checks they match the
// docker backend's apart from addresses and paths.
func TestControlPlaneGolden(t *testing.T) {
	port := 20000
	next := func() int { port++; return port }
	l := newLayout(controlplane.GoldenTopology(), "/home/kubelab/golden", next)
	golden.Check(t, "testdata/controlplane.golden", controlplane.Render(controlplane.Components(controlplane.GoldenTopology(), l.site)))
}
