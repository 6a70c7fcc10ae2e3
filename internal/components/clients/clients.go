// Package clients registers the command-line clients kubelab carries as
// components: kubectl and etcdctl (see package components). The
// components binary imports it; the one-program binaries do not.
package clients

import (
	"go.etcd.io/etcd/etcdctl/v3/ctlv3"

	"kubelab.dev/kubelab/internal/components"
	"kubelab.dev/kubelab/internal/components/clients/kubectl"
)

func init() {
	components.Register("kubectl", kubectl.Main)
	components.Register("etcdctl", func() int { ctlv3.MustStart(); return 0 })
}
