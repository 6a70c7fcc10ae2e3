// Package components runs the real upstream programs kubelab links
// (etcd, etcdutl, kube-apiserver, kube-controller-manager, kube-scheduler,
// kwok, the node daemons and the command-line clients) by name, the way a
// multi-call binary does, and kubelab's own load balancer (kubelab-lb).
// It links none of them itself: each subpackage registers one program
// (etcd: etcd, etcdutl and prune-snapshot; apiserver; controllermanager;
// scheduler; kwok; node: kubelet, kube-proxy, cri and ip-route; clients:
// kubectl and etcdctl).
//
// cmd/kubelab-components imports every subpackage (the docker images and
// `kubelab component` run it); cmd/kubelab-etcd, kubelab-apiserver,
// kubelab-controller-manager, kubelab-scheduler and kubelab-kwok one
// each, so that a process of an embedded cluster initialises only the
// packages of its own program (GODEBUG=inittrace=1: etcd 274 package
// initialisers, kube-apiserver 905, against 1,165 when one binary carried
// the whole control plane); and cmd/kubelab none, so no kubelab command
// initialises a component's packages (see internal/binaries). Linking
// costs several GiB of RAM and tens of seconds, so libraries and their
// tests start the built binaries instead of importing these packages.
package components

import (
	"fmt"
	"os"
	"sort"
)

// mains maps a component name to its upstream main. Each returns the exit
// code; os.Args already starts with the component's own name.
var mains = map[string]func() int{}

// Register adds a component: the subpackages call it from init. main
// returns the exit code; os.Args starts with the component's own name.
func Register(name string, main func() int) {
	if _, dup := mains[name]; dup {
		panic("components: " + name + " registered twice")
	}
	mains[name] = main
}

// Names lists the components this binary carries, sorted.
func Names() []string {
	names := make([]string, 0, len(mains))
	for n := range mains {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs component name with args (without the program name) and returns
// its exit code. Upstream mains parse os.Args, so Run rewrites it so that the
// component sees its own name as argv[0].
func Run(name string, args []string) (int, error) {
	main, ok := mains[name]
	if !ok {
		return 2, fmt.Errorf("unknown component %q (known: %v)", name, Names())
	}
	os.Args = append([]string{name}, args...)
	return main(), nil
}

// Command is the main of a components binary called prog: `prog
// component NAME ARGS...` runs component NAME (see Main). It returns the
// exit code.
func Command(prog string) int {
	if len(os.Args) < 3 || os.Args[1] != "component" {
		fmt.Fprintf(os.Stderr, "usage: %s component NAME [ARGS...]; components: %v, kubelab-lb\n", prog, Names())
		return 2
	}
	return Main(os.Args[2], os.Args[3:])
}
