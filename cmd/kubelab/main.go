// Command kubelab boots real Kubernetes lab clusters and runs labs on them.
// It is also a multi-call binary carrying the upstream components:
// `kubelab component NAME ARGS...`, `kubelab kubectl ...`, `kubelab etcdctl ...`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/cluster/lb"
	"kubelab.dev/kubelab/cmd/kubelab/app"
	"kubelab.dev/kubelab/internal/components"
)

func main() {
	// Before anything starts a process: descriptors inherited from the
	// caller must not leak into components that outlive this command.
	if err := app.CloseInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "kubelab: warning: marking inherited file descriptors close-on-exec:", err)
	}
	if len(os.Args) > 2 && os.Args[1] == "component" {
		os.Exit(runComponent(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) == 2 && os.Args[1] == "component" {
		fmt.Fprintf(os.Stderr, "usage: kubelab component NAME [ARGS...]; components: %v, kubelab-lb\n", components.Names())
		os.Exit(app.ExitInvalid)
	}
	if c, ok := app.ParseClientCall(os.Args[1:]); ok {
		os.Exit(runClient(c))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, app.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args[1:])
	stop()
	if err != nil {
		var ee *app.ExitError
		if !errors.As(err, &ee) || !ee.Silent {
			fmt.Fprintln(os.Stderr, "kubelab:", err)
		}
		os.Exit(app.ExitCode(err))
	}
}

func runComponent(name string, args []string) int {
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
	if name == docker.ReaperComponent {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		owner := fs.String("owner", "", "PID:START of the process the cluster belongs to")
		home := fs.String("home", "", "kubelab home the cluster belongs to")
		cl := fs.String("cluster", "", "cluster name")
		dir := fs.String("dir", "", "cluster state directory")
		eph := fs.Bool("ephemeral", false, "remove the cluster when the owner dies even after it was handed over")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if err := docker.Reap(context.Background(), *owner, *home, *cl, *dir, *eph); err != nil {
			fmt.Fprintln(os.Stderr, "kubelab-reaper:", err)
			return 1
		}
		return 0
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
	code, err := components.Run(name, args)
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

// runClient runs kubectl or etcdctl against the named lab cluster unless
// the user pointed it elsewhere.
func runClient(c app.ClientCall) int {
	env, err := c.Env()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelab:", err)
		return app.ExitCode(err)
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	return runComponent(c.Tool, c.Args)
}
