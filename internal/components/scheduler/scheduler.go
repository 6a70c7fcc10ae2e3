// Package scheduler registers upstream kube-scheduler as a component
// (see package components), with the registrations its upstream main
// makes, kubelab's recording of its per-plugin decisions (see package
// schedrecord) and the scheduler extender a lab may give it (see package
// schedextender).
package scheduler

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/component-base/cli"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/components"
	"kubelab.dev/kubelab/internal/components/schedrecord"
	_ "kubelab.dev/kubelab/internal/components/upstream" // what upstream's main registers
	"kubelab.dev/kubelab/internal/schedextender"
)

func init() { components.Register("kube-scheduler", runScheduler) }

// runScheduler is upstream kube-scheduler's main. With kubelab's
// --kubelab-extender flag it first serves the lab's scheduler extender on
// its loopback (see package schedextender) and adds it to the --config
// file. With --kubelab-scheduling-log it then rewrites the --config file
// so that every Filter and Score plugin is wrapped by a recorder (see
// package schedrecord), writes the rewritten configuration next to the
// log for people to read, and registers the wrappers as out-of-tree
// plugins.
func runScheduler() int {
	args, policy := takeFlag(os.Args[1:], controlplane.ExtenderFlag)
	args, log := takeFlag(args, controlplane.SchedulingLogFlag)
	var ext *schedextender.Extender
	if policy != "" {
		var err error
		if ext, args, err = serveExtender(args, policy); err != nil {
			fmt.Fprintf(os.Stderr, "kube-scheduler: scheduler extender: %v\n", err)
			return 1
		}
	}
	var opts []scheduler.Option
	if log != "" {
		var err error
		if args, err = recordInto(args, log, ext); err == nil {
			opts, err = schedrecord.Options(log, ext)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-scheduler: record decisions: %v\n", err)
			return 1
		}
	}
	os.Args = append(os.Args[:1], args...)
	return cli.Run(scheduler.NewSchedulerCommand(opts...))
}

// serveExtender serves the extender of policy (JSON of
// schedextender.Policy) on 127.0.0.1 and points the --config of args at a
// copy of it that calls the extender. The copy lives in memory (a memfd
// read through /proc/self/fd): the port is known only now, and no file is
// left behind however the process ends.
func serveExtender(args []string, policy string) (*schedextender.Extender, []string, error) {
	var p schedextender.Policy
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", controlplane.ExtenderFlag, err)
	}
	ext, err := schedextender.New(p, os.Stderr)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	go func() { _ = http.Serve(ln, ext) }()
	for i, a := range args {
		in, ok := strings.CutPrefix(a, "--config=")
		if !ok {
			continue
		}
		b, err := os.ReadFile(in)
		if err != nil {
			return nil, nil, err
		}
		var cfg map[string]any
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", in, err)
		}
		list, _ := cfg["extenders"].([]any)
		cfg["extenders"] = append(list, ext.Config("http://"+ln.Addr().String()))
		if b, err = yaml.Marshal(cfg); err != nil {
			return nil, nil, err
		}
		fd, err := unix.MemfdCreate(filepath.Base(in), unix.MFD_CLOEXEC)
		if err != nil {
			return nil, nil, fmt.Errorf("memfd: %w", err)
		}
		f := os.NewFile(uintptr(fd), filepath.Base(in)) // open for the life of the process
		if _, err := f.Write(b); err != nil {
			return nil, nil, err
		}
		args[i] = fmt.Sprintf("--config=/proc/self/fd/%d", fd)
		return ext, args, nil
	}
	return nil, nil, fmt.Errorf("%s needs --config=FILE", controlplane.ExtenderFlag)
}

// recordInto rewrites the --config of args into the recording one.
func recordInto(args []string, log string, ext *schedextender.Extender) ([]string, error) {
	for i, a := range args {
		if in, ok := strings.CutPrefix(a, "--config="); ok {
			out := strings.TrimSuffix(log, filepath.Ext(log)) + ".config.yaml"
			if err := schedrecord.Rewrite(in, out, ext); err != nil {
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
