package app

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "kubelab.dev/kubelab", Version: "v0.3.0"},
		Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}},
	}
	comps := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "k8s.io/kubernetes", Version: "v1.37.2"},
		{Path: "go.etcd.io/etcd/server/v3", Version: "v3.6.0", Replace: &debug.Module{Path: "go.etcd.io/etcd/server/v3", Version: "v3.7.0"}},
		{Path: "sigs.k8s.io/kwok", Version: "v0.8.0"},
	}}
	v := versionOf(bi, map[string]*debug.BuildInfo{"kubelab-components": comps})
	if got, want := v.Line(), "kubelab v0.3.0 (commit 0123456789ab, modified)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	var b strings.Builder
	if err := v.write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Kubernetes:  v1.37.2", "etcd:        v3.7.0", "kwok:        v0.8.0", "CoreDNS:     (kubelab-coredns not built)", "commit:      0123456789abcdef0123 (modified)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version lacks %q:\n%s", want, b.String())
		}
	}
}

func TestVersionReadsCoreDNSFromItsBinary(t *testing.T) {
	dns := &debug.BuildInfo{Deps: []*debug.Module{{Path: "github.com/coredns/coredns", Version: "v1.14.0"}}}
	v := versionOf(&debug.BuildInfo{GoVersion: "go1.26.0"}, map[string]*debug.BuildInfo{"kubelab-coredns": dns})
	for _, c := range v.Components {
		if c.Name == "CoreDNS" && c.Version != "v1.14.0" {
			t.Errorf("CoreDNS %q, want v1.14.0 from kubelab-coredns", c.Version)
		}
		if c.Name == "Kubernetes" && c.Version != "(kubelab-components not built)" {
			t.Errorf("Kubernetes %q without kubelab-components, want it said not built", c.Version)
		}
	}
}
