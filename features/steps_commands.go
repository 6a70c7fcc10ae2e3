package features

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cucumber/godog"

	"kubelab.dev/kubelab/ops"
)

// commandsSteps are the step library's phrases of the group Commands.
func commandsSteps() []Step {
	return []Step{
		{
			Group: "Commands", Keyword: "When", Phrase: `I run kubectl "ARGS"`,
			Doc: "kubectl: runs the built-in kubectl against the cluster (ARGS split as a shell would, without expansion; ${NAME} is a saved output, ${NAMESPACE} the scenario's namespace: default, or its own on --backend kubeconfig). " +
				`It must succeed unless directly followed by "it fails"; "the output matches" adds expectOutput. Its output can be saved.`,
			Examples: []string{`When I run kubectl "auth can-i list pods --as=system:serviceaccount:default:reader"`},
			re:       `^I run kubectl ` + quoted + `$`,
			fn: func(ctx context.Context, args string) error {
				return withScenario(ctx, func(s *scenario) error { return s.kubectl(ctx, unquote(args), "") })
			},
		},
		{
			Group: "Commands", Keyword: "When", Phrase: `I run kubectl "ARGS" with the manifest:`,
			Doc:       "script: runs kubectl ARGS with the docstring on stdin (use -f -; ${NAME} is expanded in it too); the same outcomes apply as for \"I run kubectl\".",
			Examples:  []string{`When I run kubectl "apply --validate=strict -f -" with the manifest:`},
			DocString: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo}\ndatta: {a: b}",
			re:        `^I run kubectl ` + quoted + ` with the manifest:$`,
			fn: func(ctx context.Context, args string, doc *godog.DocString) error {
				return withScenario(ctx, func(s *scenario) error { return s.kubectl(ctx, unquote(args), doc.Content) })
			},
		},
		{
			Group: "Commands", Keyword: "When", Phrase: `I run etcdctl "ARGS"`,
			Doc: "script: runs etcdctl against the cluster's etcd members, with its client certificate ($ETCDCTL; ARGS as for kubectl). " +
				`A backend whose etcd this machine cannot reach (an existing cluster) refuses it. The same outcomes apply as for "I run kubectl", and its output can be saved.`,
			Examples: []string{`When I run etcdctl "get /registry/secrets/default/db --print-value-only"`},
			re:       `^I run etcdctl ` + quoted + `$`,
			fn: func(ctx context.Context, args string) error {
				return withScenario(ctx, func(s *scenario) error { return s.command(ctx, "etcdctl", unquote(args), "") })
			},
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: "it fails|succeeds",
			Doc:      `Directly after "I run kubectl" or "I run etcdctl": the command must fail (expectError) or succeed.`,
			Examples: []string{"Then it fails"},
			re:       `^it (fails|succeeds)$`,
			fn:       outcomeStep,
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `the output matches "REGEX"`,
			Doc:      `Directly after "I run kubectl" or "I run etcdctl" (and "it fails"): the combined output must match REGEX (expectOutput, RE2).`,
			Examples: []string{`Then the output matches "^no$"`},
			re:       `^the output matches ` + quoted + `$`,
			fn:       outcomeStep,
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `[within DURATION] kubectl "ARGS" succeeds|fails`,
			Doc:      "kubectl with expectError for \"fails\". With \"within\", retried (backing off) until it passes: for what apiservers learn through informers, like RBAC bindings and admission policies.",
			Examples: []string{`Then kubectl "create configmap x --request-timeout=5s" fails`, `Then within 10s kubectl "get pods --as=system:serviceaccount:default:reader" succeeds`},
			re:       `^` + within + `kubectl ` + quoted + ` (succeeds|fails)$`,
			fn: func(ctx context.Context, d, args, outcome string) error {
				return withScenario(ctx, func(s *scenario) error { return s.kubectlCheck(ctx, d, unquote(args), outcome == "fails", "") })
			},
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `[within DURATION] kubectl "ARGS" prints "REGEX"`,
			Doc:      "kubectl with expectOutput: it succeeds and its output matches REGEX.",
			Examples: []string{`Then kubectl "get configmap hello -o jsonpath={.data.greeting}" prints "^hi$"`},
			re:       `^` + within + `kubectl ` + quoted + ` prints ` + quoted + `$`,
			fn: func(ctx context.Context, d, args, re string) error {
				return withScenario(ctx, func(s *scenario) error { return s.kubectlCheck(ctx, d, unquote(args), false, unquote(re)) })
			},
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `[within DURATION] kubectl "ARGS" fails with "REGEX"`,
			Doc:      "kubectl with expectError and expectOutput: it fails and its output matches REGEX.",
			Examples: []string{`Then within 15s kubectl "auth can-i delete pods --as=system:serviceaccount:default:reader" fails with "^no$"`},
			re:       `^` + within + `kubectl ` + quoted + ` fails with ` + quoted + `$`,
			fn: func(ctx context.Context, d, args, re string) error {
				return withScenario(ctx, func(s *scenario) error { return s.kubectlCheck(ctx, d, unquote(args), true, unquote(re)) })
			},
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `kubectl "ARGS" succeeds N times in a row`,
			Doc:      "N kubectl operations in a row, each of which must succeed.",
			Examples: []string{`Then kubectl "get nodes --request-timeout=5s" succeeds 10 times in a row`},
			re:       `^kubectl ` + quoted + ` succeeds (\d+) times in a row$`,
			fn: func(ctx context.Context, args, n string) error {
				return withScenario(ctx, func(s *scenario) error {
					count, _ := strconv.Atoi(n)
					for i := 0; i < count; i++ {
						if err := s.kubectlCheck(ctx, "", unquote(args), false, ""); err != nil {
							return fmt.Errorf("attempt %d of %d: %w", i+1, count, err)
						}
					}
					return nil
				})
			},
		},
		{
			Group: "Commands", Keyword: "When", Phrase: `I save the output as "NAME"`,
			Doc:      "Saves the trimmed output of the previous kubectl or etcdctl as ${NAME} for later arguments.",
			Examples: []string{`When I save the output as "oldVersion"`},
			re:       `^I save the output as "([A-Za-z_][A-Za-z0-9_]*)"$`,
			fn: func(ctx context.Context, name string) error {
				return withScenario(ctx, func(s *scenario) error {
					if s.last.Kind != "kubectl" && s.last.Kind != "script" {
						return fmt.Errorf("the previous operation (%q) was not a command, it has no output to save", s.last.Summary)
					}
					s.vars[name] = strings.TrimSpace(s.last.Output)
					return nil
				})
			},
		},
		{
			Group: "Commands", Keyword: "When", Phrase: "I wait DURATION [for REASON]",
			Doc:      "sleep: only for things no expression can see (say why in REASON); prefer a check \"within DURATION\".",
			Examples: []string{"When I wait 12s for the apiserver to compact etcd"},
			re:       `^I wait ` + duration + `(?: for .+)?$`,
			fn: func(ctx context.Context, d string) error {
				return withScenario(ctx, func(s *scenario) error {
					dd, err := parseDuration(d)
					if err != nil {
						return err
					}
					_, err = s.run(ctx, ops.Operation{Sleep: &ops.SleepOp{Duration: dur(dd)}})
					return err
				})
			},
		},
	}
}
