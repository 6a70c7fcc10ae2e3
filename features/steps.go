package features

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"kubelab.dev/kubelab/ops"
)

// Step is one phrase of the step library, as listed in STEPS.md.
type Step struct {
	// Group is the section of the catalog the phrase is listed in.
	Group string
	// Keyword is the Gherkin keyword the phrase reads best with; any
	// keyword (Given, When, Then, And, But) matches it.
	Keyword string
	// Phrase is the step's text with placeholders in capitals and optional
	// parts in brackets.
	Phrase string
	// Doc says what the step does, in engine operations.
	Doc string
	// Examples are steps as written in a feature file, keyword included.
	Examples []string
	// DocString is an example of the docstring the step takes, if any.
	DocString string

	re string
	fn any
}

// Pattern is the regular expression godog matches step text with.
func (s Step) Pattern() string { return s.re }

// Steps returns the step library's catalog, in catalog order.
func Steps() []Step { return catalog() }

// Binding names recorded before faults, for the "a new ... leader is
// elected" checks.
const (
	etcdBefore      = "etcdBefore"
	schedulerBefore = "schedulerBefore"
	kcmBefore       = "controllerManagerBefore"
)

// leaderLeases maps the leader-elected components of phrases to their
// kube-system Lease and the binding their holder is remembered in.
var leaderLeases = map[string]struct{ lease, binding string }{
	"scheduler":          {"kube-scheduler", schedulerBefore},
	"controller-manager": {"kube-controller-manager", kcmBefore},
}

func catalog() []Step {
	return slices.Concat(clusterSteps(), rememberSteps(), faultsSteps(), backupSteps(), nodesSteps(), objectsSteps(), expressionsSteps(), checkSteps(), commandsSteps())
}

// withScenario runs f with the scenario of ctx.
func withScenario(ctx context.Context, f func(*scenario) error) error {
	s, err := current(ctx)
	if err != nil {
		return err
	}
	return f(s)
}

// check builds a named check step: "[within DURATION] PHRASE" is a wait
// with that timeout; without it, an assert. build returns the expression
// from the phrase's arguments.
func check(phrase, doc string, examples []string, pattern string, build any) Step {
	return Step{
		Group: "Checks", Keyword: "Then", Phrase: "[within DURATION] " + phrase,
		Doc: "With \"within\": wait until it holds; without: assert it now. " + doc, Examples: examples,
		re: `^` + within + pattern + `$`,
		fn: checkFunc(build),
	}
}

// checkFunc adapts an expression builder with string arguments to a step
// function taking the optional duration first.
func checkFunc(build any) any {
	run := func(ctx context.Context, d string, expr func(*scenario) (string, error)) error {
		return withScenario(ctx, func(s *scenario) error {
			e, err := expr(s)
			if err != nil {
				return err
			}
			if d == "" {
				_, err := s.run(ctx, ops.Operation{Assert: &ops.AssertOp{Expr: e}})
				return err
			}
			return s.check(ctx, d, e)
		})
	}
	switch b := build.(type) {
	case func(*scenario) (string, error):
		return func(ctx context.Context, d string) error {
			return run(ctx, d, b)
		}
	case func(*scenario, string) (string, error):
		return func(ctx context.Context, d, a string) error {
			return run(ctx, d, func(s *scenario) (string, error) { return b(s, a) })
		}
	case func(*scenario, string, string) (string, error):
		return func(ctx context.Context, d, a, c string) error {
			return run(ctx, d, func(s *scenario) (string, error) { return b(s, a, c) })
		}
	case func(*scenario, string, string, string) (string, error):
		return func(ctx context.Context, d, a, c, e string) error {
			return run(ctx, d, func(s *scenario) (string, error) { return b(s, a, c, e) })
		}
	}
	panic(fmt.Sprintf("check: unsupported builder %T", build))
}

// check waits until expr holds, for at most d.
func (s *scenario) check(ctx context.Context, d, expr string) error {
	dd, err := parseDuration(d)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, ops.Operation{Wait: &ops.WaitOp{Expr: expr}, Timeout: dur(dd)})
	return err
}

// remember records the value of expr as a binding.
func (s *scenario) remember(ctx context.Context, name, expr string) error {
	if _, err := s.run(ctx, ops.Operation{Record: &ops.RecordOp{Name: name, Expr: expr}}); err != nil {
		return err
	}
	s.facts[name] = true
	return nil
}

// fault applies a component fault, first remembering the leader it may
// move (etcd, scheduler, controller-manager) so that "a new ... leader is
// elected" has something to compare with.
func (s *scenario) fault(ctx context.Context, action, target string) error {
	if action != "start" && action != "resume" {
		switch {
		case strings.HasPrefix(target, "etcd"):
			if err := s.remember(ctx, etcdBefore, "raft"); err != nil {
				return err
			}
		case strings.HasPrefix(target, "scheduler") || strings.HasPrefix(target, "kube-scheduler"):
			if err := s.remember(ctx, schedulerBefore, `leader("kube-scheduler")`); err != nil {
				return err
			}
		case strings.HasPrefix(target, "controller-manager") || strings.HasPrefix(target, "kube-controller-manager"):
			if err := s.remember(ctx, kcmBefore, `leader("kube-controller-manager")`); err != nil {
				return err
			}
		}
	}
	op, err := ops.New(action, &ops.TargetOp{Target: target})
	if err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	_, err = s.run(ctx, op)
	return err
}

// outcomeRE matches the steps that may follow "I run kubectl" (or
// etcdctl) and set its expectations.
var outcomeRE = regexp.MustCompile(`^(?:it (fails|succeeds)|the output matches ` + quoted + `)$`)

// kubectl runs "I run kubectl": it first reads the outcome steps right
// after it ("it fails", "the output matches ...") into the operation's
// expectError and expectOutput, so one operation carries the whole check.
// With stdin, kubectl runs from a script with the manifest on its stdin.
func (s *scenario) kubectl(ctx context.Context, args, stdin string) error {
	return s.command(ctx, "kubectl", args, stdin)
}

// command runs "I run kubectl|etcdctl" (tool): see kubectl. etcdctl runs
// from a script, as $ETCDCTL, which points it at the cluster's members.
func (s *scenario) command(ctx context.Context, tool, args, stdin string) error {
	expectError, expectOutput, seen := false, "", map[string]bool{}
	for _, next := range s.steps[s.cur+1:] {
		m := outcomeRE.FindStringSubmatch(next.Text)
		if m == nil {
			break
		}
		switch {
		case m[1] != "":
			if seen["outcome"] {
				return fmt.Errorf("%q follows another \"it fails\" or \"it succeeds\"", next.Text)
			}
			seen["outcome"] = true
			expectError = m[1] == "fails"
		default:
			if seen["output"] {
				return fmt.Errorf("%q: only one \"the output matches\" may follow \"I run %s\"", next.Text, tool)
			}
			seen["output"] = true
			expectOutput = unquote(m[2])
		}
		s.follows[next.Id] = s.steps[s.cur].Text
	}
	expanded, err := expand(args, s.vars)
	if err != nil {
		return err
	}
	argv, err := splitArgs(expanded)
	if err != nil {
		return err
	}
	if tool == "etcdctl" {
		_, err = s.run(ctx, ops.Operation{
			Description: "etcdctl " + expanded,
			Script:      &ops.ScriptOp{Command: shellCommand("$ETCDCTL", argv), ExpectError: expectError, ExpectOutput: expectOutput},
		})
		return err
	}
	if stdin == "" {
		_, err = s.run(ctx, ops.Operation{Kubectl: &ops.KubectlOp{Args: argv, ExpectError: expectError, ExpectOutput: expectOutput}})
		return err
	}
	if stdin, err = expand(stdin, s.vars); err != nil {
		return err
	}
	const eof = "KUBELAB_MANIFEST_EOF"
	if strings.Contains(stdin, eof) {
		return fmt.Errorf("the manifest must not contain %s", eof)
	}
	cmd := shellCommand("$KUBECTL", argv) + fmt.Sprintf(" <<'%s'\n%s\n%s\n", eof, stdin, eof)
	_, err = s.run(ctx, ops.Operation{
		Description: "kubectl " + expanded + " < manifest",
		Script:      &ops.ScriptOp{Command: cmd, ExpectError: expectError, ExpectOutput: expectOutput},
	})
	return err
}

// outcomeStep is "it fails", "it succeeds" and "the output matches": the
// kubectl step before it already checked them.
func outcomeStep(ctx context.Context, _ string) error {
	return withScenario(ctx, func(s *scenario) error {
		if _, ok := s.follows[s.steps[s.cur].Id]; !ok {
			return fmt.Errorf("%q must directly follow \"I run kubectl ...\" or \"I run etcdctl ...\" (or another outcome step after it)", s.steps[s.cur].Text)
		}
		return nil
	})
}

// kubectlCheck runs one kubectl operation with expectations, retried for
// d when d is set.
func (s *scenario) kubectlCheck(ctx context.Context, d, args string, expectError bool, expectOutput string) error {
	expanded, err := expand(args, s.vars)
	if err != nil {
		return err
	}
	argv, err := splitArgs(expanded)
	if err != nil {
		return err
	}
	op := ops.Operation{Kubectl: &ops.KubectlOp{Args: argv, ExpectError: expectError, ExpectOutput: expectOutput}}
	if d == "" {
		_, err = s.run(ctx, op)
		return err
	}
	dd, err := parseDuration(d)
	if err != nil {
		return err
	}
	_, err = s.eventually(ctx, op, dd)
	return err
}
