package features

import (
	"context"
	"fmt"
)

// rememberSteps are the step library's phrases of the group Remember.
func rememberSteps() []Step {
	return []Step{
		{
			Group: "Remember", Keyword: "Given", Phrase: "I remember the etcd leader",
			Doc:      "record: etcdBefore = raft. Killing, stopping, pausing or restarting an etcd member does this on its own just before the fault.",
			Examples: []string{"Given I remember the etcd leader"},
			re:       `^I remember the etcd leader$`,
			fn: func(ctx context.Context) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.remember(ctx, etcdBefore, "raft")
			},
		},
		{
			Group: "Remember", Keyword: "Given", Phrase: "I remember the scheduler|controller-manager leader",
			Doc:      `record: schedulerBefore = leader("kube-scheduler") (controllerManagerBefore for the controller-manager). Faults on a scheduler or controller-manager do this on their own.`,
			Examples: []string{"Given I remember the scheduler leader", "Given I remember the controller-manager leader"},
			re:       `^I remember the (scheduler|controller-manager) leader$`,
			fn: func(ctx context.Context, comp string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				l := leaderLeases[comp]
				return s.remember(ctx, l.binding, fmt.Sprintf("leader(%q)", l.lease))
			},
		},
		{
			Group: "Remember", Keyword: "When", Phrase: `I record the expression "EXPR" as "NAME"`,
			Doc:      "record: binds the value of EXPR to NAME for later expressions.",
			Examples: []string{`When I record the expression "len(pods(\"app=web\"))" as "webPods"`},
			re:       `^I record the expression ` + quoted + ` as "([A-Za-z_][A-Za-z0-9_]*)"$`,
			fn: func(ctx context.Context, expr, name string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.remember(ctx, name, unquote(expr))
			},
		},
	}
}
