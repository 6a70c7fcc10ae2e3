// Package controllermanager registers upstream kube-controller-manager as
// a component (see package components), with the registrations its
// upstream main makes.
package controllermanager

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"kubelab.dev/kubelab/internal/components"
	_ "kubelab.dev/kubelab/internal/components/upstream" // what upstream's main registers

	_ "time/tzdata" // CronJob time zones, as upstream's main does
)

func init() {
	components.Register("kube-controller-manager", func() int { return cli.Run(app.NewControllerManagerCommand()) })
}
