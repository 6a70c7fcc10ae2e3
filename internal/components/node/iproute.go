package node

import (
	"fmt"
	"net"
	"os"

	"github.com/vishvananda/netlink"
)

// runIPRoute is `ip route replace CIDR via GATEWAY`, any number of times
// in one call (`replace C1 via G1 replace C2 via G2 ...`), for the docker
// backend's control-plane containers, whose images hold only this binary
// (no shell, no iproute2): the apiservers need a route to every node's pod
// CIDR to reach aggregated API servers and webhooks behind pods. One call
// for all of a container's routes starts this binary once.
func runIPRoute() int {
	if err := ipRoute(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ip-route:", err)
		return 1
	}
	return 0
}

func ipRoute(args []string) error {
	routes, err := parseRoutes(args)
	if err != nil {
		return err
	}
	for _, r := range routes {
		if err := netlink.RouteReplace(&r); err != nil {
			return fmt.Errorf("replace route to %s via %s: %w", r.Dst, r.Gw, err)
		}
	}
	return nil
}

// parseRoutes reads `replace CIDR via GATEWAY`, one or more times.
func parseRoutes(args []string) ([]netlink.Route, error) {
	if len(args) == 0 || len(args)%4 != 0 {
		return nil, fmt.Errorf("usage: ip-route replace CIDR via GATEWAY [replace CIDR via GATEWAY...], got %q", args)
	}
	var out []netlink.Route
	for i := 0; i < len(args); i += 4 {
		a := args[i : i+4]
		if a[0] != "replace" || a[2] != "via" {
			return nil, fmt.Errorf("usage: ip-route replace CIDR via GATEWAY [replace CIDR via GATEWAY...], got %q", a)
		}
		_, dst, err := net.ParseCIDR(a[1])
		if err != nil {
			return nil, err
		}
		gw := net.ParseIP(a[3])
		if gw == nil {
			return nil, fmt.Errorf("gateway %q is not an IP address", a[3])
		}
		out = append(out, netlink.Route{Dst: dst, Gw: gw})
	}
	return out, nil
}
