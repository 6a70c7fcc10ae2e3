package components

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/cluster/lb"
)

// Main runs component name with args, as `kubelab component NAME ARGS...`
// does, and returns its exit code: a control-plane component first takes
// the hostname kubelab gave it, @HOST_IP@ in an argument becomes this
// host's address, and kubelab-lb is kubelab's own load balancer.
func Main(name string, args []string) int {
	// Control-plane components run in their own UTS namespace with their
	// component name as hostname: distinct apiserver identity leases, and
	// leader-election identities that say which instance leads.
	if h := os.Getenv(embedded.EnvHostname); h != "" {
		if err := unix.Sethostname([]byte(h)); err != nil {
			fmt.Fprintf(os.Stderr, "kubelab: set hostname %s: %v (sharing the host's)\n", h, err)
		}
	}
	// In containers the component's address is known only at start:
	// @HOST_IP@ in an argument stands for it.
	for i, a := range args {
		if strings.Contains(a, "@HOST_IP@") {
			args[i] = strings.ReplaceAll(a, "@HOST_IP@", hostIP())
		}
	}
	if name == "kubelab-lb" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := lb.Main(ctx, args, slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			fmt.Fprintln(os.Stderr, "kubelab-lb:", err)
			return 1
		}
		return 0
	}
	profileStart(name)
	if kc := os.Getenv(controlplane.EnvWaitForAPIServer); kc != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := waitForAPIServer(ctx, kc)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "kubelab:", err)
			return 1
		}
	}
	code, err := Run(name, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelab:", err)
	}
	return code
}

// hostIP is the first non-loopback IPv4 address of this host.
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return "127.0.0.1"
}
