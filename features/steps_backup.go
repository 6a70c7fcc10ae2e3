package features

import (
	"context"

	"kubelab.dev/kubelab/ops"
)

// backupSteps are the step library's phrases of the group Backup.
func backupSteps() []Step {
	return []Step{
		{
			Group: "Backup", Keyword: "When", Phrase: `I take an etcd snapshot "NAME"`,
			Doc:      "snapshot: saves a snapshot of etcd from one healthy member under NAME (an identifier); later expressions read NAME.revision, NAME.size, NAME.keys.",
			Examples: []string{`When I take an etcd snapshot "before"`},
			re:       `^I take an etcd snapshot "([A-Za-z_][A-Za-z0-9_]*)"$`,
			fn: func(ctx context.Context, name string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Snapshot: &ops.SnapshotOp{Name: name}})
				return err
			},
		},
		{
			Group: "Backup", Keyword: "When", Phrase: `I restore etcd from snapshot "NAME"`,
			Doc:      "restore: every etcd member restored from the snapshot taken as NAME, as a new cluster; the apiservers, schedulers and controller-managers are stopped before and started after.",
			Examples: []string{`When I restore etcd from snapshot "before"`},
			re:       `^I restore etcd from snapshot "([A-Za-z_][A-Za-z0-9_]*)"$`,
			fn: func(ctx context.Context, name string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{Restore: &ops.RestoreOp{Snapshot: name}})
				return err
			},
		},
	}
}
