package features

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/ops"
)

// expressionsSteps are the step library's phrases of the group Expressions.
func expressionsSteps() []Step {
	return []Step{
		{
			Group: "Expressions", Keyword: "Then", Phrase: `the expression "EXPR" holds`,
			Doc:      `assert: EXPR (an expression over pods(), nodes(), raft, leader()... see assertions/env.go) is true now. Write \" for a quote inside EXPR, or use single-quoted strings.`,
			Examples: []string{`Then the expression "deployment(\"web\").available == 3" holds`},
			re:       `^the expression ` + quoted + ` holds$`,
			fn: func(ctx context.Context, expr string) error {
				return withScenario(ctx, func(s *scenario) error {
					_, err := s.run(ctx, ops.Operation{Assert: &ops.AssertOp{Expr: unquote(expr)}})
					return err
				})
			},
		},
		{
			Group: "Expressions", Keyword: "Then", Phrase: `the expression "EXPR" holds within DURATION`,
			Doc:      "wait: until EXPR is true, re-evaluated on every watched change; fails after DURATION with the values it last saw.",
			Examples: []string{`Then the expression "all(pods(\"app=web\"), .phase == \"Running\")" holds within 30s`},
			re:       `^the expression ` + quoted + ` holds within ` + duration + `$`,
			fn: func(ctx context.Context, expr, d string) error {
				return withScenario(ctx, func(s *scenario) error { return s.check(ctx, d, unquote(expr)) })
			},
		},
		{
			Group: "Expressions", Keyword: "Then", Phrase: `the expression "EXPR" does not hold`,
			Doc:      "error: EXPR is false now.",
			Examples: []string{`Then the expression "node(\"worker-1\").unschedulable" does not hold`},
			re:       `^the expression ` + quoted + ` does not hold$`,
			fn: func(ctx context.Context, expr string) error {
				return withScenario(ctx, func(s *scenario) error {
					_, err := s.run(ctx, ops.Operation{Error: &ops.ErrorOp{Expr: unquote(expr)}})
					return err
				})
			},
		},
		{
			Group: "Expressions", Keyword: "Then", Phrase: `the expression "EXPR" stays false|true for DURATION`,
			Doc:      "error: EXPR (or its negation, for \"stays true\") never holds during DURATION.",
			Examples: []string{`Then the expression "len(pods(\"app=web\")) > 3" stays false for 5s`, `Then the expression "pod(\"pinned\").phase == \"Running\"" stays true for 3s`},
			re:       `^the expression ` + quoted + ` stays (false|true) for ` + duration + `$`,
			fn: func(ctx context.Context, expr, which, d string) error {
				return withScenario(ctx, func(s *scenario) error {
					e := unquote(expr)
					if which == "true" {
						e = "!(" + e + ")"
					}
					dd, err := parseDuration(d)
					if err != nil {
						return err
					}
					_, err = s.run(ctx, ops.Operation{Error: &ops.ErrorOp{Expr: e, For: dur(dd)}})
					return err
				})
			},
		},
		{
			Group: "Expressions", Keyword: "When", Phrase: `I keep checking for DURATION that the expression "EXPR" holds`,
			Doc:      "error on !(EXPR), run in the background while the next steps run, for at most DURATION; \"the expression held the whole time\" stops it and reports.",
			Examples: []string{`When I keep checking for 60s that the expression "len(filter(pods(\"app=web\"), .ready && !.deleting)) >= 2" holds`},
			re:       `^I keep checking for ` + duration + ` that the expression ` + quoted + ` holds$`,
			fn: func(ctx context.Context, d, expr string) error {
				return withScenario(ctx, func(s *scenario) error {
					dd, err := parseDuration(d)
					if err != nil {
						return err
					}
					sess, p, err := s.prepare(ops.Operation{Error: &ops.ErrorOp{Expr: "!(" + unquote(expr) + ")", For: dur(dd)}})
					if err != nil {
						return err
					}
					stop, err := sess.Background(s.ctx, p)
					if err != nil {
						return err
					}
					s.checks = append(s.checks, stop)
					return nil
				})
			},
		},
		{
			Group: "Expressions", Keyword: "Then", Phrase: "the expression held the whole time",
			Doc:      `Stops the checks started by "I keep checking" and fails if one saw its expression false.`,
			Examples: []string{"Then the expression held the whole time"},
			re:       `^the expression held the whole time$`,
			fn: func(ctx context.Context) error {
				return withScenario(ctx, func(s *scenario) error {
					if len(s.checks) == 0 {
						return fmt.Errorf(`no background check is running: start one with "I keep checking for DURATION that the expression ... holds"`)
					}
					var errs []string
					for _, stop := range s.checks {
						if r := stop(); r.Status != engine.Passed {
							errs = append(errs, r.Summary+": "+r.Error)
						}
					}
					s.checks = nil
					if len(errs) > 0 {
						return errors.New(strings.Join(errs, "\n"))
					}
					return nil
				})
			},
		},
	}
}

// checkSteps are the Expressions phrases that wait for a state of the
// cluster named in words (they run the same waits as "the expression ... holds").
func checkSteps() []Step {
	return []Step{
		check("a new etcd leader is elected",
			"raft.hasLeader && raft.leader != etcdBefore.leader && raft.term > etcdBefore.term (etcdBefore is recorded before etcd faults, or by \"I remember the etcd leader\").",
			[]string{"Then within 5s a new etcd leader is elected"},
			`a new etcd leader is elected`,
			func(s *scenario) (string, error) {
				if !s.facts[etcdBefore] {
					return "", fmt.Errorf(`no etcd leader remembered: fault an etcd member first, or add "Given I remember the etcd leader"`)
				}
				return "raft.hasLeader && raft.leader != etcdBefore.leader && raft.term > etcdBefore.term", nil
			}),
		check("the etcd cluster has quorum|has lost quorum",
			"raft.quorum (a majority is reachable and there is a leader), or its negation.",
			[]string{"Then within 15s the etcd cluster has lost quorum", "Then within 30s the etcd cluster has quorum"},
			`the etcd cluster (has|has lost) quorum`,
			func(s *scenario, which string) (string, error) {
				if which == "has lost" {
					return "!raft.quorum", nil
				}
				return "raft.quorum", nil
			}),
		check("N etcd members are reachable",
			"raft.reachable == N.",
			[]string{"Then within 30s 3 etcd members are reachable"},
			`(\d+) etcd members? (?:is|are) reachable`,
			func(s *scenario, n string) (string, error) { return "raft.reachable == " + n, nil }),
		check("a new scheduler|controller-manager leader is elected",
			`leader("kube-scheduler") (or "kube-controller-manager") is held, by another instance than the one remembered before the fault.`,
			[]string{"Then within 12s a new scheduler leader is elected", "Then within 12s a new controller-manager leader is elected"},
			`a new (scheduler|controller-manager) leader is elected`,
			func(s *scenario, comp string) (string, error) {
				l := leaderLeases[comp]
				if !s.facts[l.binding] {
					return "", fmt.Errorf(`no %s leader remembered: fault one first, or add "Given I remember the %s leader"`, comp, comp)
				}
				return fmt.Sprintf("leader(%q) != \"\" && leader(%q) != %s", l.lease, l.lease, l.binding), nil
			}),
		check(`the scheduler|controller-manager leader is "COMPONENT"`,
			`leader("kube-scheduler") (or "kube-controller-manager") == COMPONENT.`,
			[]string{`Then the scheduler leader is "kube-scheduler-1"`},
			`the (scheduler|controller-manager) leader is `+quoted,
			func(s *scenario, comp, name string) (string, error) {
				return fmt.Sprintf("leader(%q) == %s", leaderLeases[comp].lease, strconv.Quote(unquote(name))), nil
			}),
		check(`node "NODE" is Ready|NotReady`,
			`node(NODE).ready, or its negation (Ready condition False or Unknown).`,
			[]string{`Then within 20s node "worker-2" is NotReady`},
			`node `+quoted+` is (Ready|NotReady)`,
			func(s *scenario, node, state string) (string, error) {
				e := fmt.Sprintf("node(%s).ready", strconv.Quote(unquote(node)))
				if state == "NotReady" {
					e = "!" + e
				}
				return e, nil
			}),
		check(`node "NODE" has the taint "KEY[:EFFECT]"`,
			`any(node(NODE).taints, .key == KEY [&& .effect == EFFECT]).`,
			[]string{`Then within 20s node "worker-2" has the taint "node.kubernetes.io/unreachable:NoExecute"`},
			`node `+quoted+` has the taint `+quoted,
			func(s *scenario, node, taint string) (string, error) {
				k, e, ok := strings.Cut(unquote(taint), ":")
				cond := ".key == " + strconv.Quote(k)
				if ok {
					cond += " && .effect == " + strconv.Quote(e)
				}
				return fmt.Sprintf("any(node(%s).taints, %s)", strconv.Quote(unquote(node)), cond), nil
			}),
		check(`N pods labelled "SELECTOR" are Running [on node "NODE"]`,
			`Exactly N pods match SELECTOR (not counting pods being deleted), all Running and ready [and all on NODE].`,
			[]string{`Then within 30s 3 pods labelled "app=web" are Running`, `Then within 60s 3 pods labelled "app=web" are Running on node "worker-2"`},
			`(\d+) pods? labelled `+quoted+` (?:is|are) Running(?: on node `+quoted+`)?`,
			func(s *scenario, n, sel, node string) (string, error) {
				live := fmt.Sprintf("filter(pods(%s), !.deleting)", strconv.Quote(unquote(sel)))
				cond := `.phase == "Running" && .ready`
				if node != "" {
					cond += " && .node == " + strconv.Quote(unquote(node))
				}
				return fmt.Sprintf("len(%s) == %s && all(%s, %s)", live, n, live, cond), nil
			}),
		check(`no pod labelled "SELECTOR" runs on node "NODE"`,
			`none(pods(SELECTOR), .node == NODE), not counting pods being deleted.`,
			[]string{`Then within 30s no pod labelled "app=web" runs on node "worker-3"`},
			`no pod labelled `+quoted+` runs on node `+quoted,
			func(s *scenario, sel, node string) (string, error) {
				return fmt.Sprintf("none(filter(pods(%s), !.deleting), .node == %s)", strconv.Quote(unquote(sel)), strconv.Quote(unquote(node))), nil
			}),
		check(`the scheduler filtered node "NODE" out of pod "POD" with PLUGIN`,
			`scheduling(POD).filtered[NODE].plugin == PLUGIN: the first Filter plugin that rejected the node in the scheduler's last cycle for the pod.`,
			[]string{`Then within 20s the scheduler filtered node "worker-1" out of pod "big" with TaintToleration`},
			`the scheduler filtered node `+quoted+` out of pod `+quoted+` with (\w+)`,
			func(s *scenario, node, pod, plugin string) (string, error) {
				return fmt.Sprintf("scheduling(%s).filtered[%s].plugin == %q", strconv.Quote(unquote(pod)), strconv.Quote(unquote(node)), plugin), nil
			}),
		check(`the scheduler bound pod "POD" to node "NODE", its highest total score`,
			`scheduling(POD).selected == NODE && NODE in scheduling(POD).best (with two feasible nodes or more; with one the scheduler binds it unscored).`,
			[]string{`Then within 20s the scheduler bound pod "big" to node "worker-4", its highest total score`},
			`the scheduler bound pod `+quoted+` to node `+quoted+`, its highest total score`,
			func(s *scenario, pod, node string) (string, error) {
				p, n := strconv.Quote(unquote(pod)), strconv.Quote(unquote(node))
				return fmt.Sprintf("scheduling(%s).selected == %s && %s in scheduling(%s).best", p, n, n, p), nil
			}),
		check(`deployment "NAME" has N available replicas`,
			`deployment(NAME).available == N.`,
			[]string{`Then within 30s deployment "web" has 5 available replicas`},
			`deployment `+quoted+` has (\d+) available replicas?`,
			func(s *scenario, name, n string) (string, error) {
				return fmt.Sprintf("deployment(%s).available == %s", strconv.Quote(unquote(name)), n), nil
			}),
	}
}
