package app

import (
	"strings"
	"testing"
)

func TestKubeFlagsExplicit(t *testing.T) {
	for _, tc := range []struct {
		kind string
		f    kubeFlags
		want string
	}{
		{backendKubeconfig, kubeFlags{}, "needs --kubeconfig"},
		{backendEmbedded, kubeFlags{kubeconfig: "k"}, "say so with --backend kubeconfig"},
		{backendDocker, kubeFlags{context: "c"}, "say so with --backend kubeconfig"},
		{backendKubeconfig, kubeFlags{kubeconfig: "k"}, ""},
		{backendEmbedded, kubeFlags{}, ""},
	} {
		err := tc.f.check(tc.kind)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %+v: %v, want %q", tc.kind, tc.f, err, tc.want)
		}
	}
}
