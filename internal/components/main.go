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
	"kubelab.dev/kubelab/cluster/pki"
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
	if prefix := os.Getenv(controlplane.EnvServingCA); prefix != "" && name == "kube-apiserver" {
		var err error
		if args, err = servingWithOwnIP(args, prefix, hostIP()); err != nil {
			fmt.Fprintln(os.Stderr, "kubelab:", err)
			return 1
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

// servingDir is where an apiserver in a container writes the serving
// certificate servingWithOwnIP issues (its container's own filesystem).
const servingDir = "/run/kubelab-serving"

// servingWithOwnIP re-issues the serving certificate named by args'
// --tls-cert-file with ip added, signed by the CA at prefix, and returns
// args naming the new certificate and key.
func servingWithOwnIP(args []string, prefix, ip string) ([]string, error) {
	const certFlag, keyFlag = "--tls-cert-file=", "--tls-private-key-file="
	certAt, keyAt := -1, -1
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, certFlag):
			certAt = i
		case strings.HasPrefix(a, keyFlag):
			keyAt = i
		}
	}
	if certAt < 0 || keyAt < 0 || net.ParseIP(ip) == nil {
		return nil, fmt.Errorf("re-issue the serving certificate: want %s and %s flags and an address (got %q)", certFlag, keyFlag, ip)
	}
	ca, err := pki.LoadCA(prefix)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(servingDir, 0o700); err != nil {
		return nil, err
	}
	p, err := ca.Reissue(strings.TrimPrefix(args[certAt], certFlag), servingDir, "apiserver", net.ParseIP(ip))
	if err != nil {
		return nil, fmt.Errorf("re-issue the serving certificate: %w", err)
	}
	out := append([]string(nil), args...)
	out[certAt], out[keyAt] = certFlag+p.Cert, keyFlag+p.Key
	return out, nil
}
