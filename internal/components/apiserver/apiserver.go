// Package apiserver registers upstream kube-apiserver as a component (see
// package components), with the registrations its upstream main makes.
package apiserver

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"

	"kubelab.dev/kubelab/internal/components"
	_ "kubelab.dev/kubelab/internal/components/upstream" // what upstream's main registers

	_ "time/tzdata" // CronJob time zones are validated here
)

func init() {
	components.Register("kube-apiserver", func() int { return cli.Run(app.NewAPIServerCommand()) })
}
