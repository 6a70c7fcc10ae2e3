// Package components links the real upstream control-plane programs
// (etcd, etcdutl, kube-apiserver, kube-controller-manager, kube-scheduler,
// kwok) into a binary and runs one of them by name, the way a multi-call
// binary does. Its subpackages register more: node (kubelet, kube-proxy
// and kubelab's cri and ip-route, which run inside docker nodes) and
// clients (kubectl, etcdctl).
//
// cmd/kubelab-components imports all of them; cmd/kubelab-control-plane
// only this one, so the processes of an embedded cluster do not
// initialise the packages of kubectl or the kubelet at every start; and
// cmd/kubelab none, so no kubelab command initialises a component's
// packages (it executes kubelab-components, see internal/binaries). Linking costs several GiB of RAM and
// tens of seconds, so libraries and their tests start the built binaries
// instead of importing these packages.
package components

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/etcdutl/v3/etcdutl"
	"go.etcd.io/etcd/pkg/v3/cobrautl"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream mains do
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream mains do
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream mains do
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	kwoksignals "sigs.k8s.io/kwok/pkg/utils/signals"

	_ "time/tzdata" // CronJob time zones, as upstream mains do
)

// mains maps a component name to its upstream main. Each returns the exit
// code; os.Args already starts with the component's own name.
var mains = map[string]func() int{
	"kube-apiserver":          func() int { return cli.Run(apiserver.NewAPIServerCommand()) },
	"kube-controller-manager": func() int { return cli.Run(kcm.NewControllerManagerCommand()) },
	"kube-scheduler":          runScheduler,
	"etcd":                    func() int { etcdmain.Main(os.Args); return 0 },
	"etcdutl":                 runEtcdutl,
	"kwok":                    runKwok,
}

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

// runKwok mirrors sigs.k8s.io/kwok/cmd/kwok's main.
func runKwok() int {
	// Kubernetes registers a non-bool --version on the global flag set, which
	// collides with cobra's --version in kwok's command.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}
	ctx := kwoksignals.SetupSignalContext()
	ctx, logger := kwoklog.InitFlags(ctx, flagset)
	ctx, err := kwokconfig.InitFlags(ctx, flagset)
	if err != nil {
		logger.Error("init config flags", "err", err)
		return 1
	}
	command := kwokcmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("kwok exited", "err", err)
		return 1
	}
	return 0
}

// runEtcdutl mirrors go.etcd.io/etcd/etcdutl/v3's main (a package main,
// so its root command is rebuilt here from the exported subcommands):
// the offline tool that restores and inspects snapshots and data
// directories, with no server running.
func runEtcdutl() int {
	root := &cobra.Command{Use: "etcdutl", Short: "An administrative command line tool for etcd3."}
	root.PersistentFlags().DurationVar(&etcdutl.FlockTimeout, "timeout", 10*time.Second, "time to wait to obtain a file lock on db file, 0 to block indefinitely")
	root.PersistentFlags().StringVarP(&etcdutl.OutputFormat, "write-out", "w", "simple", "set the output format (fields, json, protobuf, simple, table)")
	root.AddCommand(
		etcdutl.NewDefragCommand(),
		etcdutl.NewSnapshotCommand(),
		etcdutl.NewHashKVCommand(),
		etcdutl.NewVersionCommand(),
		etcdutl.NewMigrateCommand(),
	)
	root.SetHelpTemplate(`{{.UsageString}}`)
	if err := root.Execute(); err != nil {
		cobrautl.ExitWithError(cobrautl.ExitError, err) // prints and exits like upstream etcdutl
	}
	return 0
}
