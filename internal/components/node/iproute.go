package node

import (
	"fmt"
	"net"
	"os"

	"github.com/vishvananda/netlink"
)

// runIPRoute is `ip route replace CIDR via GATEWAY` for the docker
// backend's control-plane containers, whose images hold only this binary
// (no shell, no iproute2): the apiservers need a route to every node's pod
// CIDR to reach aggregated API servers and webhooks behind pods.
func runIPRoute() int {
	if err := ipRoute(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ip-route:", err)
		return 1
	}
	return 0
}

func ipRoute(args []string) error {
	if len(args) != 4 || args[0] != "replace" || args[2] != "via" {
		return fmt.Errorf("usage: ip-route replace CIDR via GATEWAY, got %q", args)
	}
	_, dst, err := net.ParseCIDR(args[1])
	if err != nil {
		return err
	}
	gw := net.ParseIP(args[3])
	if gw == nil {
		return fmt.Errorf("gateway %q is not an IP address", args[3])
	}
	if err := netlink.RouteReplace(&netlink.Route{Dst: dst, Gw: gw}); err != nil {
		return fmt.Errorf("replace route to %s via %s: %w", dst, gw, err)
	}
	return nil
}
