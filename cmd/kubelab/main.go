// Command kubelab boots real Kubernetes lab clusters and runs labs on them.
// It is also a multi-call binary carrying the upstream components:
// `kubelab component NAME ARGS...`, `kubelab kubectl ...`, `kubelab etcdctl ...`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cmd/kubelab/app"
	"kubelab.dev/kubelab/internal/components"
	_ "kubelab.dev/kubelab/internal/components/clients" // kubectl, etcdctl
	_ "kubelab.dev/kubelab/internal/components/node"    // kubelet, kube-proxy, cri, ip-route
	"kubelab.dev/kubelab/internal/safetext"
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
			// An error may quote a submission or the cluster.
			fmt.Fprintln(os.Stderr, "kubelab:", safetext.Escape(err.Error()))
		}
		os.Exit(app.ExitCode(err))
	}
}

func runComponent(name string, args []string) int {
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
	return components.Main(name, args)
}

// runClient runs kubectl or etcdctl against the named lab cluster unless
// the user pointed it elsewhere.
func runClient(c app.ClientCall) int {
	if c.AsksForHelp() {
		return runComponent(c.Tool, c.Args) // help needs no cluster
	}
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
