package backends

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/cluster/docker"
)

func TestCheck(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: c, user: u}}]
current-context: dev
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{Kubeconfig, Options{}, "needs --kubeconfig"},
		{Embedded, Options{Kubeconfig: "k"}, "say so with --backend kubeconfig"},
		{Docker, Options{Context: "c"}, "say so with --backend kubeconfig"},
		{"podman", Options{}, `unknown backend "podman" (want embedded, docker or kubeconfig)`},
		{Kubeconfig, Options{Kubeconfig: kc}, ""},
		{Kubeconfig, Options{Kubeconfig: kc, Context: "dev"}, ""},
		// A wrong file or context is bad input, found before anything runs.
		{Kubeconfig, Options{Kubeconfig: kc + ".missing"}, "load kubeconfig " + kc + ".missing"},
		{Kubeconfig, Options{Kubeconfig: kc, Context: "prod"}, `no context "prod" (it has dev)`},
		{Embedded, Options{}, ""},
		{"", Options{}, ""},
	} {
		err := Check(tc.name, tc.o)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %+v: %v, want %q", tc.name, tc.o, err, tc.want)
		}
	}
	if err := Check("podman", Options{}); !errors.Is(err, ErrUnknown) {
		t.Errorf("an unknown name: %v, want ErrUnknown", err)
	}
}

// TestMakePlacesStateUnderTheHome: each backend's state goes where
// `down --all` and Open look for it, and the options reach it.
func TestMakePlacesStateUnderTheHome(t *testing.T) {
	home := t.TempDir()
	o := Options{Home: home, Binary: "/bin/true", Fresh: true}
	topo := cluster.Topology{Name: "lab"}

	b, err := Make(Docker, topo, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*docker.Backend); !ok || !b.Topology().Fresh || b.Topology().Nodes == nil {
		t.Errorf("docker: %T, fresh %v, nodes %v; want a defaulted topology, fresh", b, b.Topology().Fresh, b.Topology().Nodes)
	}
	b, err = Make(Embedded, topo, o)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := b.(interface{ Dir() string }); !ok || b.Name() != Embedded || !b.Topology().Fresh || !strings.HasPrefix(e.Dir(), home) {
		t.Errorf("embedded: %s, fresh %v", b.Name(), b.Topology().Fresh)
	}
	if _, err := Make(Kubeconfig, topo, Options{Home: home, Kubeconfig: filepath.Join(home, "missing")}); err == nil {
		t.Error("kubeconfig backend on a missing kubeconfig: no error")
	}
}
