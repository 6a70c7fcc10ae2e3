package components

import (
	"github.com/coredns/coredns/coremain"

	// The CoreDNS plugins a lab cluster's DNS needs (a subset of upstream's
	// core/plugin list; the full list pulls in every cloud provider's SDK).
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func runCoreDNS() int {
	coremain.Run()
	return 0
}
