// Package kubectl runs upstream kubectl, as k8s.io/kubernetes/cmd/kubectl's
// main does. It imports nothing of kubelab's, so cmd/kubelab-kubectl
// initialises kubectl's packages alone (396 against the 1,279 of
// kubelab-components, measured with GODEBUG=inittrace=1).
package kubectl

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
)

// Main runs kubectl with os.Args and returns its exit code (kubectl
// itself exits on a failed command, printing the error as upstream does).
func Main() int {
	logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	command := kubectlcmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err) // prints and exits like upstream kubectl
	}
	return 0
}
