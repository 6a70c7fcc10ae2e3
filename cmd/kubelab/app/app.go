// Package app is the kubelab command line: it parses flags, calls the
// library and prints. main calls Run; nothing here exits the process.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"

	"kubelab.dev/kubelab/cluster/backends"
	"kubelab.dev/kubelab/cluster/docker"
	"kubelab.dev/kubelab/cluster/embedded"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/safetext"
)

// Streams are the process's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// globals are the flags every subcommand shares.
type globals struct {
	name    string
	home    string
	verbose bool
	streams Streams
	// ran is set once flags and arguments were accepted and a command
	// starts: an error before that is a usage error.
	ran bool
	// version is the root's --version.
	version bool
	// fresh boots control planes from nothing (--fresh), not the seed.
	fresh bool
	// course is where the embedded course was extracted (courseDir).
	course     string
	courseOnce sync.Once
	// interruptEndsNormally is set by a command that Ctrl-C ends as its
	// normal way to stop (check --watch): its own result stands.
	interruptEndsNormally bool
	// hooks replace the backends in this package's tests.
	hooks hooks
	// langFlag is --lang as given; lang is the language the command
	// speaks (--lang, else the locale's).
	langFlag string
	lang     i18n.Lang
	words    *i18n.Printer
}

// nameFlag is " --name NAME" for a hint about a cluster that is not the
// default one, "" for the default.
func (g *globals) nameFlag() string {
	if g.name == "kubelab" {
		return ""
	}
	return " --name " + g.name
}

// addFresh gives a command that boots clusters its --fresh flag.
func (g *globals) addFresh(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().BoolVar(&g.fresh, "fresh", false, "boot each control plane from nothing (the apiservers bootstrap an empty etcd), not from the seed kubelab keeps of that bootstrap")
	return cmd
}

// dockerDir is the state directory of the docker cluster name.
func (g *globals) dockerDir(name string) string { return backends.DockerDir(g.home, name) }

// Run runs the kubelab command line with args (without the program name).
// Its error says which exit code it means (ExitCode): a command stopped
// because ctx ended is ErrInterrupted, whatever its own error was (what
// it started is removed before it returns); an error before a command
// ran (flags, arguments, unknown command) is invalid input.
func Run(ctx context.Context, s Streams, args []string) error { return runWith(ctx, s, args, hooks{}) }

// runWith is Run with the given hooks (the zero value in production).
func runWith(ctx context.Context, s Streams, args []string, h hooks) error {
	// etcd's gRPC client logs every refused connection; kubelab reports
	// member health itself.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
	// The components linked into this binary register flags of their own
	// (component-base's --version among them) on pflag's global set, which
	// cobra merges into every command: they are theirs, not kubelab's.
	pflag.CommandLine = pflag.NewFlagSet("kubelab", pflag.ContinueOnError)
	// Names and messages from submissions, lab files and clusters reach
	// the terminal through these: their control characters show escaped.
	s.Out, s.Err = safetext.NewWriter(s.Out), safetext.NewWriter(s.Err)
	g := &globals{streams: s, hooks: h}
	root := newRootCommand(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && !g.interruptEndsNormally:
		return &ExitError{Code: ExitInterrupted, Err: ErrInterrupted}
	case !g.ran:
		return invalid(err)
	}
	return err
}

// sweeps reports whether cmd first removes the orphans of dead kubelab
// processes. Commands that only print what the binary knows (kubelab
// alone, --version, version, help) do not: the sweep reads every
// process's environment and, where Docker runs, asks it for containers,
// several times what such a command costs otherwise.
func sweeps(cmd *cobra.Command) bool {
	return cmd.HasParent() && cmd.Name() != "version" && cmd.Name() != "help"
}

// NewRootCommand builds the command tree.
func NewRootCommand(s Streams) *cobra.Command { return newRootCommand(&globals{streams: s}) }

func newRootCommand(g *globals) *cobra.Command {
	s := g.streams
	root := &cobra.Command{
		Use:   "kubelab",
		Short: "Real Kubernetes labs and drills: boot a real control plane, hurt it, watch it recover",
		Long: `kubelab boots real Kubernetes control planes (etcd, kube-apiservers,
schedulers, controller-managers, nodes) from upstream code, lets you hurt
them and watch them recover, runs labs and drills on them and grades
exercises.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.version {
				_, err := fmt.Fprintln(s.Out, versionLine())
				return err
			}
			return cmd.Help()
		},
	}
	// A local flag of the root: the components linked into kubelab
	// register a --version of their own on the global flag set, which
	// cobra would otherwise merge in.
	root.Flags().BoolVar(&g.version, "version", false, "print kubelab's version and commit (kubelab version: also the components')")
	// Every invocation first removes what a kubelab killed with -9 left
	// behind: processes and directories of clusters whose owner is dead.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd {
			return nil // completing a word must not touch any cluster
		}
		g.ran = true
		if !g.verbose {
			// client-go reports every broken watch of kubelab's own
			// informers through klog: in a lab, drill or exercise that kills
			// apiservers or etcd members, that is the lesson, not news. -v
			// keeps it.
			klog.SetLogger(logr.Discard())
		}
		if err := g.setLang(); err != nil {
			return err
		}
		if !sweeps(cmd) {
			return nil
		}
		removed, err := embedded.Home(g.home).Sweep(cmd.Context())
		for _, n := range removed {
			fmt.Fprintf(s.Err, "removed orphaned cluster %q (its kubelab process had died)\n", n)
		}
		if err != nil {
			fmt.Fprintf(s.Err, "warning: removing orphans: %v\n", err)
		}
		if dockerUp(cmd.Context()) {
			removed, err := docker.Sweep(cmd.Context(), g.home, false)
			for _, n := range removed {
				fmt.Fprintf(s.Err, "removed orphaned docker cluster %q (its kubelab process had died)\n", n)
			}
			if err != nil {
				fmt.Fprintf(s.Err, "warning: removing docker orphans: %v\n", err)
			}
		}
		return nil
	}
	root.SetFlagErrorFunc(flagError)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&g.name, "name", envOr("KUBELAB_NAME", "kubelab"), "cluster name ($KUBELAB_NAME)")
	pf.StringVar(&g.home, "home", string(embedded.DefaultHome()), "state directory for clusters ($KUBELAB_HOME)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "debug logs on stderr")
	pf.StringVar(&g.langFlag, "lang", "", "the language of labs, drills, exercises and their reports: en or zh (default: the locale's, from $LC_ALL, $LC_MESSAGES or $LANG)")
	root.AddCommand(
		g.addFresh(newUpCommand(g)),
		newDownCommand(g),
		newStatusCommand(g), newEvalCommand(g), newMetricsCommand(g), newLogsCommand(g),
		newKubeconfigCommand(g),
		newFaultCommand(g), newNodeCommand(g),
		g.addFresh(newRunCommand(g)),
		newValidateCommand(g),
		newListCommand(g),
		newImagesCommand(g),
		g.addFresh(newDrillCommand(g)),
		g.addFresh(newGradeCommand(g)), newExerciseCommand(g), newCheckCommand(g), newUICommand(g), newSolveCommand(g), newGradePodCommand(g),
		newVersionCommand(g), newGetCommand(g), newBenchCommand(g), newReportCommand(g), newSchemaCommand(g), newTranslateCommand(g),
		newClientCommand(g, "kubectl", "Run kubectl against the cluster (--name); arguments after kubectl are kubectl's"),
		newClientCommand(g, "etcdctl", "Run etcdctl against the cluster's etcd members (--name); arguments after etcdctl are etcdctl's"),
	)
	registerCompletions(g, root)
	return root
}

// setLang resolves the language of the command: --lang, else the
// locale's.
func (g *globals) setLang() error {
	g.lang = i18n.FromEnv(os.Getenv)
	if g.langFlag != "" {
		l, err := i18n.Parse(g.langFlag)
		if err != nil {
			g.ran = false // a usage error
			return fmt.Errorf("--lang: %w", err)
		}
		g.lang = l
	}
	g.words = i18n.NewPrinter(g.lang)
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// flagError words a flag's bad value for a person ("--workers wants a
// whole number, got \"abc\"") rather than as the parser's error.
func flagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	want := map[string]string{
		"bool":     "true or false",
		"int":      "a whole number",
		"int32":    "a whole number",
		"int64":    "a whole number",
		"uint":     "a whole number, 0 or more",
		"float64":  "a number",
		"duration": "a duration such as 30s, 2m or 1h30m",
	}[iv.GetFlag().Value.Type()]
	if want == "" {
		return err
	}
	return fmt.Errorf("--%s wants %s, got %q", iv.GetFlag().Name, want, iv.GetValue())
}
