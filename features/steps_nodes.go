package features

import (
	"context"
	"fmt"
	"strings"

	"kubelab.dev/kubelab/ops"
)

// nodesSteps are the step library's phrases of the group Nodes.
func nodesSteps() []Step {
	return []Step{
		{
			Group: "Nodes", Keyword: "When", Phrase: `I cordon|uncordon|drain node "NODE"`,
			Doc:      "cordon/uncordon/drain. A drain evicts through the Eviction API, so PodDisruptionBudgets hold it back until replacements are ready.",
			Examples: []string{`When I cordon node "worker-1"`, `When I drain node "worker-1"`},
			re:       `^I (cordon|uncordon|drain) node ` + quoted + `$`,
			fn: func(ctx context.Context, verb, node string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				op, err := ops.Aimed(verb, unquote(node))
				if err != nil {
					return err
				}
				_, err = s.run(ctx, op)
				return err
			},
		},
		{
			Group: "Nodes", Keyword: "Then", Phrase: "the drain was held back by a PodDisruptionBudget",
			Doc:      "Checks that the previous drain had at least one eviction refused (429) by a PodDisruptionBudget and retried.",
			Examples: []string{"Then the drain was held back by a PodDisruptionBudget"},
			re:       `^the drain was held back by a PodDisruptionBudget$`,
			fn: func(ctx context.Context) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				if s.last.Kind != "drain" {
					return fmt.Errorf("the previous operation was %q, not a drain", s.last.Summary)
				}
				if !strings.Contains(s.last.Output, "refused by a PodDisruptionBudget") {
					return fmt.Errorf("no eviction was refused by a PodDisruptionBudget during %s; it printed:\n%s", s.last.Summary, s.last.Output)
				}
				return nil
			},
		},
		{
			Group: "Nodes", Keyword: "When", Phrase: `I taint node "NODE" with "KEY[=VALUE]:EFFECT"`,
			Doc:      "taint: adds or replaces the taint; EFFECT is NoSchedule, PreferNoSchedule or NoExecute.",
			Examples: []string{`When I taint node "worker-2" with "key=value:NoExecute"`, `When I taint node "worker-1" with "dedicated:NoSchedule"`},
			re:       `^I taint node ` + quoted + ` with ` + quoted + `$`,
			fn: func(ctx context.Context, node, taint string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				k, v, e, err := parseTaint(unquote(taint))
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Taint: &ops.TaintOp{Node: unquote(node), Key: k, Value: v, Effect: e}})
				return err
			},
		},
		{
			Group: "Nodes", Keyword: "When", Phrase: `I remove the taint "KEY[:EFFECT]" from node "NODE"`,
			Doc:      "untaint: removes the taints with that key (and effect, when given).",
			Examples: []string{`When I remove the taint "dedicated:NoSchedule" from node "worker-1"`},
			re:       `^I remove the taint ` + quoted + ` from node ` + quoted + `$`,
			fn: func(ctx context.Context, taint, node string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				k, e, _ := strings.Cut(unquote(taint), ":")
				_, err = s.run(ctx, ops.Operation{Untaint: &ops.UntaintOp{Node: unquote(node), Key: k, Effect: e}})
				return err
			},
		},
		{
			Group: "Nodes", Keyword: "When", Phrase: `I label node "NODE" with "KEY=VALUE[,KEY-]"`,
			Doc:      "label: sets labels; KEY- removes one.",
			Examples: []string{`When I label node "worker-3" with "disk=ssd"`},
			re:       `^I label node ` + quoted + ` with ` + quoted + `$`,
			fn: func(ctx context.Context, node, labels string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				set := map[string]*string{}
				for _, kv := range strings.Split(unquote(labels), ",") {
					k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
					switch {
					case ok:
						set[k] = &v
					case strings.HasSuffix(k, "-"):
						set[strings.TrimSuffix(k, "-")] = nil
					default:
						return fmt.Errorf("label %q: want KEY=VALUE or KEY-", kv)
					}
				}
				_, err = s.run(ctx, ops.Operation{Label: &ops.LabelOp{Name: unquote(node), Labels: set}})
				return err
			},
		},
	}
}
