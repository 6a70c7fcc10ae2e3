// Package node registers the components that run inside a docker
// backend's nodes and control-plane containers: the kubelet, kube-proxy,
// and kubelab's own cri (what the runtime reports over the CRI) and
// ip-route (see package components). The components binary imports it;
// the one-program binaries of the embedded backend do not.
package node

import (
	"context"

	"k8s.io/component-base/cli"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"

	"kubelab.dev/kubelab/internal/components"
)

func init() {
	components.Register("kubelet", func() int { return cli.Run(kubelet.NewKubeletCommand(context.Background())) })
	components.Register("kube-proxy", func() int { return cli.Run(proxy.NewProxyCommand()) })
	components.Register("cri", runCRI)
	components.Register("ip-route", runIPRoute)
}
