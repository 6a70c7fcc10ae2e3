package features

import (
	"context"
	"fmt"
	"strings"

	"kubelab.dev/kubelab/ops"
)

// faultsSteps are the step library's phrases of the group Faults.
func faultsSteps() []Step {
	return []Step{
		{
			Group: "Faults", Keyword: "When", Phrase: "I kill|stop|start|restart|pause|resume the etcd leader|scheduler leader|controller-manager leader",
			Doc:      "kill/stop/start/restart/pause/resume with target etcd-leader, scheduler-leader or controller-manager-leader, resolved when the step runs.",
			Examples: []string{"When I kill the etcd leader", "When I kill the scheduler leader", "When I pause the controller-manager leader"},
			re:       `^I (kill|stop|start|restart|pause|resume) the (etcd leader|scheduler leader|controller-manager leader)$`,
			fn: func(ctx context.Context, action, role string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.fault(ctx, action, strings.ReplaceAll(role, " ", "-"))
			},
		},
		{
			Group: "Faults", Keyword: "When", Phrase: "I kill|stop|pause an etcd follower",
			Doc:      "kill/stop/pause with target etcd-follower: a member that is not the leader.",
			Examples: []string{"When I kill an etcd follower"},
			re:       `^I (kill|stop|pause) an etcd follower$`,
			fn: func(ctx context.Context, action string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.fault(ctx, action, "etcd-follower")
			},
		},
		{
			Group: "Faults", Keyword: "When", Phrase: `I kill|stop|start|restart|pause|resume "COMPONENT"`,
			Doc:      "kill/stop/start/restart/pause/resume one component: etcd-N, kube-apiserver-N, kube-scheduler-N, kube-controller-manager-N, load-balancer or worker-N; or, in a stacked topology, control-plane-N: its four components at once.",
			Examples: []string{`When I kill "kube-apiserver-1"`, `When I start "etcd-1"`},
			re:       `^I (kill|stop|start|restart|pause|resume) ` + quoted + `$`,
			fn: func(ctx context.Context, action, target string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.fault(ctx, action, unquote(target))
			},
		},
		{
			Group: "Faults", Keyword: "When", Phrase: "I kill|stop|start|restart|pause|resume every etcd member|apiserver|scheduler|controller-manager",
			Doc:      "The same operation on each instance of the component in turn (\"all apiservers\" also reads).",
			Examples: []string{"When I kill every apiserver", "When I start every etcd member", "When I stop all controller-managers"},
			re:       `^I (kill|stop|start|restart|pause|resume) (?:every|all) (etcd members?|apiservers?|schedulers?|controller-managers?)$`,
			fn: func(ctx context.Context, action, comp string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				sess, err := s.session()
				if err != nil {
					return err
				}
				t := sess.Topology()
				prefix, n := "", 0
				switch strings.TrimSuffix(comp, "s") {
				case "etcd member":
					prefix, n = "etcd", t.Etcd
				case "apiserver":
					prefix, n = "kube-apiserver", t.APIServers
				case "scheduler":
					prefix, n = "kube-scheduler", t.Schedulers
				case "controller-manager":
					prefix, n = "kube-controller-manager", t.ControllerManagers
				}
				for i := 1; i <= n; i++ {
					if err := s.fault(ctx, action, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			Group: "Faults", Keyword: "When", Phrase: `I take node "NODE" down`,
			Doc:      "nodeDown: the node's kubelet stops and stops heartbeating; its pods stay as they are in the API.",
			Examples: []string{`When I take node "worker-2" down`},
			re:       `^I take node ` + quoted + ` down$`,
			fn: func(ctx context.Context, node string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{NodeDown: &ops.NodeOp{Node: unquote(node)}})
				return err
			},
		},
		{
			Group: "Faults", Keyword: "When", Phrase: `I bring node "NODE" back up`,
			Doc:      "nodeUp: the node's kubelet starts again.",
			Examples: []string{`When I bring node "worker-2" back up`},
			re:       `^I bring node ` + quoted + ` back up$`,
			fn: func(ctx context.Context, node string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, ops.Operation{NodeUp: &ops.NodeOp{Node: unquote(node)}})
				return err
			},
		},
	}
}
