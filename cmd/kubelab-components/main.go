// Command kubelab-components runs one of the upstream components kubelab
// carries: `kubelab-components component NAME ARGS...` with NAME etcd,
// etcdutl, kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
// kubelab-lb, kubelet, kube-proxy, cri, ip-route, kubectl or etcdctl.
//
// kubelab itself links none of them, so that every kubelab command starts
// quickly: `kubelab component NAME`, `kubelab kubectl` and `kubelab
// etcdctl` execute this binary, which hack/build.sh puts next to kubelab,
// and docker nodes and control-plane containers run it as /kubelab.
package main

import (
	"os"

	"kubelab.dev/kubelab/internal/components"
	_ "kubelab.dev/kubelab/internal/components/apiserver"
	_ "kubelab.dev/kubelab/internal/components/clients" // kubectl, etcdctl
	_ "kubelab.dev/kubelab/internal/components/controllermanager"
	_ "kubelab.dev/kubelab/internal/components/etcd" // etcd, etcdutl, prune-snapshot
	_ "kubelab.dev/kubelab/internal/components/kwok"
	_ "kubelab.dev/kubelab/internal/components/node" // kubelet, kube-proxy, cri, ip-route
	_ "kubelab.dev/kubelab/internal/components/scheduler"
)

func main() { os.Exit(components.Command("kubelab")) }
