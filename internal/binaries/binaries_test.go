package binaries

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestComponentsNextToKubelab(t *testing.T) {
	dir := t.TempDir()
	kubelab := filepath.Join(dir, "kubelab")
	if got := ComponentsOf(kubelab); got != kubelab {
		t.Errorf("without a sibling: %s, want kubelab itself", got)
	}
	if _, err := MustComponents(kubelab); err == nil || !strings.Contains(err.Error(), "hack/build.sh") {
		t.Errorf("without a sibling: error %v, want one that says how to build it", err)
	}
	comp := filepath.Join(dir, Components)
	if err := os.WriteFile(comp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := Sibling(kubelab, Components); ok {
		t.Error("a file that is not executable counts as the components binary")
	}
	if err := os.Chmod(comp, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ComponentsOf(kubelab); got != comp {
		t.Errorf("ComponentsOf = %s, want %s", got, comp)
	}
	if got, err := MustComponents(kubelab); err != nil || got != comp {
		t.Errorf("MustComponents = %s, %v; want %s", got, err, comp)
	}
	if got := ComponentsOf(comp); got != comp {
		t.Errorf("ComponentsOf(components) = %s, want itself", got)
	}
}

func TestKubectlPrefersTheSlimBinary(t *testing.T) {
	dir := t.TempDir()
	kubelab := filepath.Join(dir, "kubelab")
	if got := KubectlOf(kubelab); !slices.Equal(got, []string{kubelab, "kubectl"}) {
		t.Errorf("alone: %q, want kubelab's own kubectl", got)
	}
	comp := filepath.Join(dir, Components)
	if err := os.WriteFile(comp, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := KubectlOf(kubelab); !slices.Equal(got, []string{comp, "component", "kubectl"}) {
		t.Errorf("with %s: %q, want its kubectl", Components, got)
	}
	slim := filepath.Join(dir, Kubectl)
	if err := os.WriteFile(slim, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := KubectlOf(kubelab); !slices.Equal(got, []string{slim}) {
		t.Errorf("with %s: %q, want it", Kubectl, got)
	}
}

func TestProgramIsTheOneProgramBinary(t *testing.T) {
	dir := t.TempDir()
	kubelab := filepath.Join(dir, "kubelab")
	if p, ok := Program(kubelab, "kube-apiserver"); ok {
		t.Errorf("without kubelab-apiserver: %s, want none", p)
	}
	api := filepath.Join(dir, "kubelab-apiserver")
	if err := os.WriteFile(api, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, ok := Program(kubelab, "kube-apiserver"); !ok || p != api {
		t.Errorf("Program(kube-apiserver) = %s, %t; want %s", p, ok, api)
	}
	if p, ok := Program(kubelab, "kubelet"); ok {
		t.Errorf("Program(kubelet) = %s, want none (it has no executable of its own)", p)
	}
	if got, want := executables(), []string{"kubelab-apiserver", "kubelab-controller-manager", "kubelab-etcd", "kubelab-kwok", "kubelab-scheduler"}; !slices.Equal(got, want) {
		t.Errorf("one-program executables = %q, want %q", got, want)
	}
}

// Every one-program executable has its command, and hack/build.sh builds it.
func TestProgramsAreBuilt(t *testing.T) {
	build, err := os.ReadFile("../../hack/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range executables() {
		if _, err := os.Stat(filepath.Join("../../cmd", p, "main.go")); err != nil {
			t.Errorf("%s: no command: %v", p, err)
		}
		if !strings.Contains(string(build), strings.TrimPrefix(p, "kubelab-")) {
			t.Errorf("hack/build.sh does not build %s", p)
		}
	}
}

// executables are the one-program executables, sorted.
func executables() []string {
	var out []string
	for _, p := range programs {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
