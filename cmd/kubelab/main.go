// Command kubelab boots real Kubernetes lab clusters and runs labs on them.
// `kubelab component NAME ARGS...`, `kubelab kubectl ...` and `kubelab
// etcdctl ...` run the upstream components, which kubelab does not link:
// it executes kubelab-components, built next to it (see package
// binaries), so that every kubelab command starts quickly.
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
	"kubelab.dev/kubelab/internal/binaries"
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
		os.Exit(execComponents(os.Args[1:])) // its usage lists the components
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
	if name == "kubectl" {
		return execKubectl(args)
	}
	return execComponents(append([]string{"component", name}, args...))
}

// execKubectl replaces this process with kubelab-kubectl, which starts in
// half the time of kubelab-components, or with the latter's kubectl when
// it is not there.
func execKubectl(args []string) int {
	return execNext(func(self string) (string, []string, error) {
		if bin, ok := binaries.Sibling(self, binaries.Kubectl); ok {
			return bin, append([]string{"kubectl"}, args...), nil
		}
		bin, err := binaries.MustComponents(self)
		return bin, append([]string{bin, "component", "kubectl"}, args...), err
	})
}

// execComponents replaces this process with kubelab-components and args.
func execComponents(args []string) int {
	return execNext(func(self string) (string, []string, error) {
		bin, err := binaries.MustComponents(self)
		return bin, append([]string{bin}, args...), err
	})
}

// execNext replaces this process with the executable pick chooses next
// to kubelab, run with argv: the component keeps this process's PID, so
// whoever started it (an embedded cluster's supervisor, a shell, a
// container runtime) signals and waits for the component itself. It
// returns only on failure.
func execNext(pick func(self string) (bin string, argv []string, err error)) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelab: find kubelab binary:", err)
		return 1
	}
	bin, argv, err := pick(self)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelab:", err)
		return 1
	}
	err = syscall.Exec(bin, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "kubelab: run %s: %v\n", bin, err)
	return 1
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
