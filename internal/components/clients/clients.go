// Package clients registers the command-line clients kubelab carries as
// components: kubectl and etcdctl (see package components). The
// components binary imports it; the control-plane binary does not.
package clients

import (
	"os"

	"go.etcd.io/etcd/etcdctl/v3/ctlv3"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"

	"kubelab.dev/kubelab/internal/components"
)

func init() {
	components.Register("kubectl", runKubectl)
	components.Register("etcdctl", func() int { ctlv3.MustStart(); return 0 })
}

// runKubectl mirrors k8s.io/kubernetes/cmd/kubectl's main.
func runKubectl() int {
	logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	command := kubectlcmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err) // prints and exits like upstream kubectl
	}
	return 0
}
