// Package scheduler registers upstream kube-scheduler as a component
// (see package components), with the registrations its upstream main
// makes, and kubelab's recording of its per-plugin decisions (see
// package schedrecord).
package scheduler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/component-base/cli"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/components"
	"kubelab.dev/kubelab/internal/components/schedrecord"
	_ "kubelab.dev/kubelab/internal/components/upstream" // what upstream's main registers
)

func init() { components.Register("kube-scheduler", runScheduler) }

// runScheduler is upstream kube-scheduler's main. With kubelab's
// --kubelab-scheduling-log flag it first rewrites the --config file so
// that every Filter and Score plugin is wrapped by a recorder (see
// package schedrecord), writes the rewritten configuration next to the
// log for people to read, and registers the wrappers as out-of-tree
// plugins.
func runScheduler() int {
	args, log := takeFlag(os.Args[1:], controlplane.SchedulingLogFlag)
	var opts []scheduler.Option
	if log != "" {
		var err error
		if args, err = recordInto(args, log); err == nil {
			opts, err = schedrecord.Options(log)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-scheduler: record decisions: %v\n", err)
			return 1
		}
	}
	os.Args = append(os.Args[:1], args...)
	return cli.Run(scheduler.NewSchedulerCommand(opts...))
}

// recordInto rewrites the --config of args into the recording one.
func recordInto(args []string, log string) ([]string, error) {
	for i, a := range args {
		if in, ok := strings.CutPrefix(a, "--config="); ok {
			out := strings.TrimSuffix(log, filepath.Ext(log)) + ".config.yaml"
			if err := schedrecord.Rewrite(in, out); err != nil {
				return nil, err
			}
			args[i] = "--config=" + out
			return args, nil
		}
	}
	return nil, fmt.Errorf("%s needs --config=FILE", controlplane.SchedulingLogFlag)
}

// takeFlag removes --name=value from args and returns the value.
func takeFlag(args []string, name string) ([]string, string) {
	out := args[:0:0]
	var v string
	for _, a := range args {
		if val, ok := strings.CutPrefix(a, name+"="); ok {
			v = val
			continue
		}
		out = append(out, a)
	}
	return out, v
}
