// Package binaries finds the executables hack/build.sh builds next to
// kubelab. The kubelab command line carries no upstream component, so
// that each `kubelab` command starts in a fraction of the time: the
// components run from kubelab-components (all of them: control plane,
// node daemons, kubectl and etcdctl) and, for the processes of embedded
// clusters, from one executable per program (kubelab-etcd,
// kubelab-apiserver, ...), each of which initialises the packages of its
// own program only.
package binaries

import (
	"fmt"
	"os"
	"path/filepath"
)

// Names of the executables next to kubelab.
const (
	// Components carries every component: `kubelab-components component
	// NAME ARGS...`. Docker images hold it as /kubelab.
	Components = "kubelab-components"
	// Kubectl is upstream kubectl alone, which starts in half the time.
	Kubectl = "kubelab-kubectl"
)

// Sibling is the path of the executable name next to the kubelab binary
// kubelab; ok is false when there is none.
func Sibling(kubelab, name string) (path string, ok bool) {
	p := filepath.Join(filepath.Dir(kubelab), name)
	st, err := os.Stat(p)
	return p, err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// programs maps a component to the executable that carries it alone
// (with kubelab's load balancer, which every components executable runs).
var programs = map[string]string{
	"etcd": "kubelab-etcd", "etcdutl": "kubelab-etcd", "prune-snapshot": "kubelab-etcd",
	"kubelab-lb":              "kubelab-etcd",
	"kube-apiserver":          "kubelab-apiserver",
	"kube-controller-manager": "kubelab-controller-manager",
	"kube-scheduler":          "kubelab-scheduler",
	"kwok":                    "kubelab-kwok",
}

// Program is the executable next to the kubelab binary kubelab that
// carries component's program alone (`component NAME ARGS...`); ok is
// false when there is none.
func Program(kubelab, component string) (path string, ok bool) {
	name, ok := programs[component]
	if !ok {
		return "", false
	}
	return Sibling(kubelab, name)
}

// ComponentsOf is the components executable next to the kubelab binary
// kubelab, or kubelab itself when there is none (a binary that links the
// components, as in tests that build one).
func ComponentsOf(kubelab string) string {
	if p, ok := Sibling(kubelab, Components); ok {
		return p
	}
	return kubelab
}

// KubectlOf is the command line that runs kubectl for the kubelab binary
// kubelab: kubelab-kubectl next to it, else kubelab-components' kubectl,
// else kubelab's own.
func KubectlOf(kubelab string) []string {
	if p, ok := Sibling(kubelab, Kubectl); ok {
		return []string{p}
	}
	if c := ComponentsOf(kubelab); c != kubelab {
		return []string{c, "component", "kubectl"}
	}
	return []string{kubelab, "kubectl"}
}

// EtcdctlOf is the command line that runs etcdctl for the kubelab binary
// kubelab: kubelab-components' etcdctl, else kubelab's own.
func EtcdctlOf(kubelab string) []string {
	if c := ComponentsOf(kubelab); c != kubelab {
		return []string{c, "component", "etcdctl"}
	}
	return []string{kubelab, "etcdctl"}
}

// MustComponents is the components executable next to the kubelab
// binary kubelab, or an error that says how to get it.
func MustComponents(kubelab string) (string, error) {
	if p, ok := Sibling(kubelab, Components); ok {
		return p, nil
	}
	return "", fmt.Errorf("%s is not next to %s: the components run from it (hack/build.sh builds both)",
		Components, kubelab)
}
