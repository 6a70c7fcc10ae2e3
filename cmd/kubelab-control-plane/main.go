// Command kubelab-control-plane runs the control-plane components of an
// embedded kubelab cluster: `kubelab-control-plane component NAME ARGS...`
// with NAME etcd, etcdutl, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok or kubelab-lb, exactly as `kubelab component` does
// (which executes kubelab-components).
//
// It carries nothing else (no kubectl or kubelet), so each process of a
// cluster initialises fewer packages than kubelab-components would (1,165
// against 1,279, measured with GODEBUG=inittrace=1) and shares its pages
// with the cluster's other processes. The embedded backend uses it when
// it stands next to the kubelab binary (hack/build.sh builds them all),
// and kubelab-components otherwise.
package main

import (
	"fmt"
	"os"

	"kubelab.dev/kubelab/internal/components"
)

func main() {
	if len(os.Args) < 3 || os.Args[1] != "component" {
		fmt.Fprintf(os.Stderr, "usage: kubelab-control-plane component NAME [ARGS...]; components: %v, kubelab-lb\n", components.Names())
		os.Exit(2)
	}
	os.Exit(components.Main(os.Args[2], os.Args[3:]))
}
