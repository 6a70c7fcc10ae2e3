package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/load"
)

// `kubelab eval` evaluates expressions on a running cluster: what a lab's
// wait, assert or record would see there, for authors trying one out and
// learners looking at the machinery (raft, leases, scheduling decisions).

func newEvalCommand(g *globals) *cobra.Command {
	var output string
	var watch bool
	cmd := &cobra.Command{
		Use:   "eval EXPRESSION...",
		Short: "Evaluate lab expressions on a running cluster (raft, pods(\"app=web\"), leader(\"kube-scheduler\")...): what a wait or assert would see",
		Long: `Eval evaluates expressions of the lab language on a running cluster
(--name) and prints their values, with the names expressions use: the
etcd Raft table (raft), pods, nodes, leases, events, endpoints, the
scheduler's decisions, the audit log... (docs: the README's expression
reference). Each expression is checked first, as kubelab validate checks
a lab's: a typo gets the nearest name or field, and nothing is read. A
read that fails (a component that does not answer, a metric it lacks) is
an error that names it, where a wait would see the zero value and keep
waiting.

One expression prints its value alone; several print "EXPRESSION = VALUE"
lines. -o json prints one JSON object, expression to value.

--watch evaluates again whenever the cluster changes (and every 5s for
what no informer watches, such as raft) and prints the values that
changed, with the time, until Ctrl-C.`,
		Example: `  kubelab eval raft
  kubelab eval 'leader("kube-scheduler")' 'len(pods("app=web"))'
  kubelab eval 'map(nodes(), {.name + " " + .readyStatus})' -o json
  kubelab eval raft.leader raft.term --watch
  kubelab eval 'metric("kube-scheduler-1", "scheduler_pending_pods", {"queue": "unschedulable"})'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" {
				return invalidf("--output %q: want json", output)
			}
			for _, a := range args {
				if _, err := assertions.Compile(a, nil, false); err != nil {
					return invalidf("%s: %s", a, load.ExprProblem(err, nil))
				}
			}
			b, err := openBackend(cmd.Context(), g)
			if err != nil {
				return err
			}
			r, err := liveRunner(g, g.verbose)
			if err != nil {
				return err
			}
			s, err := r.Attach(cmd.Context(), "eval", b)
			if err != nil {
				return cannotRun(err)
			}
			defer s.Close(cmd.Context(), true)
			if watch {
				g.interruptEndsNormally = true // Ctrl-C is how a watch ends
				return watchEval(cmd.Context(), g.streams.Out, s, args)
			}
			values, err := evalAll(s, args)
			if err != nil {
				return err
			}
			return printValues(g.streams.Out, output, args, values)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json: one JSON object, expression to value")
	cmd.Flags().BoolVar(&watch, "watch", false, "evaluate again on every change of the cluster, printing what changed, until Ctrl-C")
	return cmd
}

// evalAll evaluates each expression now.
func evalAll(s *engine.Session, exprs []string) ([]any, error) {
	values := make([]any, len(exprs))
	for i, e := range exprs {
		v, err := s.EvalStrict(e)
		if err != nil {
			if strings.HasPrefix(err.Error(), e+" failed: ") {
				return nil, err // the expression is the lookup that failed
			}
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		values[i] = v
	}
	return values, nil
}

// printValues prints one value alone, several as EXPRESSION = VALUE
// lines, or all as one JSON object.
func printValues(w io.Writer, output string, exprs []string, values []any) error {
	if output == "json" {
		obj := map[string]any{}
		for i, e := range exprs {
			obj[e] = assertions.Plain(values[i])
		}
		b, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	if len(exprs) == 1 {
		_, err := fmt.Fprintln(w, assertions.Pretty(values[0]))
		return err
	}
	var b strings.Builder
	for i, e := range exprs {
		fmt.Fprintf(&b, "%s = %s\n", e, assertions.Pretty(values[i]))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// watchEval prints every expression's value, then, after each change of
// the cluster, the values that changed, until ctx ends.
func watchEval(ctx context.Context, w io.Writer, s *engine.Session, exprs []string) error {
	last := make([]string, len(exprs))
	start := time.Now()
	for {
		var b strings.Builder
		for i, e := range exprs {
			text := ""
			if v, err := s.EvalStrict(e); err != nil {
				first, _, _ := strings.Cut(err.Error(), "\n") // not the expression drawn again
				text = "error: " + first
			} else {
				text = assertions.Format(v)
			}
			if text != last[i] {
				fmt.Fprintf(&b, "%7.2fs  %s = %s\n", time.Since(start).Seconds(), e, text)
				last[i] = text
			}
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if !awaitChange(ctx, s) {
			return nil
		}
	}
}
