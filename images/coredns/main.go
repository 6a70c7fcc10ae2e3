// Command coredns is the image of the cluster DNS addon's pods: upstream
// CoreDNS with the plugins a lab cluster's DNS needs (a subset of
// upstream's core/plugin list; the full list pulls in every cloud
// provider's SDK). The coredns Deployment in kube-system runs it with the
// Corefile of its ConfigMap.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
