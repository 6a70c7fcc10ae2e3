// Package etcd registers etcd's programs as components (see package
// components): the etcd server, etcdutl (the offline tool that restores
// and inspects snapshots and data directories) and prune-snapshot.
package etcd

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/etcdutl/v3/etcdutl"
	"go.etcd.io/etcd/pkg/v3/cobrautl"
	"go.etcd.io/etcd/server/v3/etcdmain"

	"kubelab.dev/kubelab/internal/components"
)

func init() {
	components.Register("etcd", func() int { etcdmain.Main(os.Args); return 0 })
	components.Register("etcdutl", runEtcdutl)
	components.Register(PruneSnapshot, runPruneSnapshot)
}

// runEtcdutl mirrors go.etcd.io/etcd/etcdutl/v3's main (a package main,
// so its root command is rebuilt here from the exported subcommands).
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
