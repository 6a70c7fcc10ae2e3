package features

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"sigs.k8s.io/yaml"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
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
	return []Step{
		// Cluster.
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster",
			Doc:      "A cluster with one of each component (1 etcd member, 1 apiserver, 1 scheduler, 1 controller-manager, 1 worker). Clusters boot at the first step that needs them, so timings may follow.",
			Examples: []string{"Given a lab cluster"},
			re:       `^a lab cluster$`,
			fn: func(ctx context.Context) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(*cluster.Topology) error { return nil })
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster with COUNTS",
			Doc:      "COUNTS lists components in any order and subset: N etcd members, N apiservers, N schedulers, N controller-managers, N workers. Omitted counts are 1.",
			Examples: []string{"Given a lab cluster with 3 etcd members, 2 schedulers and 3 workers", "Given a lab cluster with 2 apiservers and 2 workers", "Given a lab cluster with 3 etcd members"},
			re:       `^a lab cluster with (.+)$`,
			fn: func(ctx context.Context, counts string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error { return parseCounts(counts, t) })
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "a lab cluster:",
			Doc:       "The docstring is the topology in YAML, with the fields of a lab file's spec.cluster (etcd, apiservers, schedulers, controllerManagers, workers, nodes, timings). Unknown fields are errors.",
			Examples:  []string{"Given a lab cluster:"},
			DocString: "etcd: 3\nworkers: 2\ntimings: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}",
			re:        `^a lab cluster:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error {
					if err := yaml.UnmarshalStrict([]byte(doc.Content), t); err != nil {
						return fmt.Errorf("topology docstring: %w", err)
					}
					return nil
				})
			},
		},
		{
			Group: "Cluster", Keyword: "Given", Phrase: "TIMING DURATION[, TIMING DURATION and TIMING DURATION]",
			Doc: "Shortens timings before the cluster boots. TIMING is one of: lease duration, renew deadline, retry period (leader election of schedulers and controller-managers), " +
				"node monitor grace period, node lease duration, toleration seconds (default tolerations for not-ready and unreachable nodes), etcd compaction interval.",
			Examples: []string{"Given lease duration 4s, renew deadline 3s and retry period 1s", "Given node monitor grace period 8s and toleration seconds 10s", "Given etcd compaction interval 5s"},
			re:       timingPattern(),
			fn: func(ctx context.Context, timings string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				return s.configure(func(t *cluster.Topology) error { return parseTimings(timings, &t.Timings) })
			},
		},

		// Remembering.
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

		// Faults.
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
			Doc:      "kill/stop/start/restart/pause/resume one component: etcd-N, kube-apiserver-N, kube-scheduler-N, kube-controller-manager-N, load-balancer or worker-N.",
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
				_, err = s.run(ctx, engine.Operation{NodeDown: &engine.NodeOp{Node: unquote(node)}})
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
				_, err = s.run(ctx, engine.Operation{NodeUp: &engine.NodeOp{Node: unquote(node)}})
				return err
			},
		},

		// Nodes.
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
				n := unquote(node)
				op := engine.Operation{}
				switch verb {
				case "cordon":
					op.Cordon = &engine.NodeOp{Node: n}
				case "uncordon":
					op.Uncordon = &engine.NodeOp{Node: n}
				case "drain":
					op.Drain = &engine.DrainOp{Node: n}
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
				_, err = s.run(ctx, engine.Operation{Taint: &engine.TaintOp{Node: unquote(node), Key: k, Value: v, Effect: e}})
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
				_, err = s.run(ctx, engine.Operation{Untaint: &engine.UntaintOp{Node: unquote(node), Key: k, Effect: e}})
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
				_, err = s.run(ctx, engine.Operation{Label: &engine.LabelOp{Name: unquote(node), Labels: set}})
				return err
			},
		},

		// Objects.
		{
			Group: "Objects", Keyword: "When", Phrase: "I apply:",
			Doc:       "apply: server-side applies the objects of the docstring (several YAML documents allowed; namespace default).",
			Examples:  []string{"When I apply:"},
			DocString: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {greeting: hi}",
			re:        `^I apply:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Apply: &engine.ManifestOp{Manifest: doc.Content}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: "I create:",
			Doc:       "create: creates the objects of the docstring; fails if one exists.",
			Examples:  []string{"When I create:"},
			DocString: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once}",
			re:        `^I create:$`,
			fn: func(ctx context.Context, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Create: &engine.ManifestOp{Manifest: doc.Content}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I apply the file "PATH"`,
			Doc:      "apply: the objects of a YAML file, relative to the feature file.",
			Examples: []string{`When I apply the file "manifests/web.yaml"`},
			re:       `^I apply the file ` + quoted + `$`,
			fn: func(ctx context.Context, path string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Apply: &engine.ManifestOp{File: unquote(path)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I delete KIND "NAME"`,
			Doc:      "delete: one object by kind and name (namespace default).",
			Examples: []string{`When I delete configmap "hello"`, `When I delete Deployment "web"`},
			re:       `^I delete ([A-Za-z][A-Za-z0-9.]*) ` + quoted + `$`,
			fn: func(ctx context.Context, kind, name string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Delete: &engine.DeleteOp{Kind: kind, Name: unquote(name)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I delete the pods labelled "SELECTOR"`,
			Doc:      "delete: every pod matching a label selector (namespace default).",
			Examples: []string{`When I delete the pods labelled "app=web"`},
			re:       `^I delete the pods labelled ` + quoted + `$`,
			fn: func(ctx context.Context, sel string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Delete: &engine.DeleteOp{Kind: "Pod", Selector: unquote(sel)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I scale deployment "NAME" to N replicas`,
			Doc:      "patch: a merge patch of spec.replicas. It only writes the desired state; controllers do the rest.",
			Examples: []string{`When I scale deployment "web" to 5 replicas`},
			re:       `^I scale deployment ` + quoted + ` to (\d+) replicas?$`,
			fn: func(ctx context.Context, name, n string) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Patch: &engine.PatchOp{Kind: "Deployment", Name: unquote(name), Type: "merge",
					Patch: fmt.Sprintf(`{"spec": {"replicas": %s}}`, n)}})
				return err
			},
		},
		{
			Group: "Objects", Keyword: "When", Phrase: `I patch KIND "NAME" with:`,
			Doc:       "patch: a merge patch given as the docstring (YAML or JSON).",
			Examples:  []string{`When I patch configmap "hello" with:`},
			DocString: "data: {greeting: hello}",
			re:        `^I patch ([A-Za-z][A-Za-z0-9.]*) ` + quoted + ` with:$`,
			fn: func(ctx context.Context, kind, name string, doc *godog.DocString) error {
				s, err := current(ctx)
				if err != nil {
					return err
				}
				_, err = s.run(ctx, engine.Operation{Patch: &engine.PatchOp{Kind: kind, Name: unquote(name), Type: "merge", Patch: doc.Content}})
				return err
			},
		},

		// Expressions.
		{
			Group: "Expressions", Keyword: "Then", Phrase: `the expression "EXPR" holds`,
			Doc:      `assert: EXPR (an expression over pods(), nodes(), raft, leader()... see assertions/env.go) is true now. Write \" for a quote inside EXPR, or use single-quoted strings.`,
			Examples: []string{`Then the expression "deployment(\"web\").available == 3" holds`},
			re:       `^the expression ` + quoted + ` holds$`,
			fn: func(ctx context.Context, expr string) error {
				return withScenario(ctx, func(s *scenario) error {
					_, err := s.run(ctx, engine.Operation{Assert: &engine.AssertOp{Expr: unquote(expr)}})
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
					_, err := s.run(ctx, engine.Operation{Error: &engine.ErrorOp{Expr: unquote(expr)}})
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
					_, err = s.run(ctx, engine.Operation{Error: &engine.ErrorOp{Expr: e, For: dur(dd)}})
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
					sess, p, err := s.prepare(engine.Operation{Error: &engine.ErrorOp{Expr: "!(" + unquote(expr) + ")", For: dur(dd)}})
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

		// Named checks: each is a wait (with "within DURATION") or an assert.
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
		check(`deployment "NAME" has N available replicas`,
			`deployment(NAME).available == N.`,
			[]string{`Then within 30s deployment "web" has 5 available replicas`},
			`deployment `+quoted+` has (\d+) available replicas?`,
			func(s *scenario, name, n string) (string, error) {
				return fmt.Sprintf("deployment(%s).available == %s", strconv.Quote(unquote(name)), n), nil
			}),

		// Commands.
		{
			Group: "Commands", Keyword: "When", Phrase: `I run kubectl "ARGS"`,
			Doc: "kubectl: runs the built-in kubectl against the cluster (ARGS split as a shell would, without expansion; ${NAME} is a saved output). " +
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
			Group: "Commands", Keyword: "Then", Phrase: "it fails|succeeds",
			Doc:      `Directly after "I run kubectl": the command must fail (expectError) or succeed.`,
			Examples: []string{"Then it fails"},
			re:       `^it (fails|succeeds)$`,
			fn:       outcomeStep,
		},
		{
			Group: "Commands", Keyword: "Then", Phrase: `the output matches "REGEX"`,
			Doc:      `Directly after "I run kubectl" (and "it fails"): the combined output must match REGEX (expectOutput, RE2).`,
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
			Doc:      "Saves the trimmed output of the previous kubectl as ${NAME} for later kubectl arguments.",
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
					_, err = s.run(ctx, engine.Operation{Sleep: &engine.SleepOp{Duration: dur(dd)}})
					return err
				})
			},
		},
	}
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
				_, err := s.run(ctx, engine.Operation{Assert: &engine.AssertOp{Expr: e}})
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
	_, err = s.run(ctx, engine.Operation{Wait: &engine.WaitOp{Expr: expr}, Timeout: dur(dd)})
	return err
}

// remember records the value of expr as a binding.
func (s *scenario) remember(ctx context.Context, name, expr string) error {
	if _, err := s.run(ctx, engine.Operation{Record: &engine.RecordOp{Name: name, Expr: expr}}); err != nil {
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
	t := &engine.TargetOp{Target: target}
	op := engine.Operation{}
	switch action {
	case "kill":
		op.Kill = t
	case "stop":
		op.Stop = t
	case "start":
		op.Start = t
	case "restart":
		op.Restart = t
	case "pause":
		op.Pause = t
	case "resume":
		op.Resume = t
	default:
		return fmt.Errorf("unknown fault %q", action)
	}
	_, err := s.run(ctx, op)
	return err
}

// outcomeRE matches the steps that may follow "I run kubectl" and set its
// expectations.
var outcomeRE = regexp.MustCompile(`^(?:it (fails|succeeds)|the output matches ` + quoted + `)$`)

// kubectl runs "I run kubectl": it first reads the outcome steps right
// after it ("it fails", "the output matches ...") into the operation's
// expectError and expectOutput, so one operation carries the whole check.
// With stdin, kubectl runs from a script with the manifest on its stdin.
func (s *scenario) kubectl(ctx context.Context, args, stdin string) error {
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
				return fmt.Errorf("%q: only one \"the output matches\" may follow \"I run kubectl\"", next.Text)
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
	if stdin == "" {
		_, err = s.run(ctx, engine.Operation{Kubectl: &engine.KubectlOp{Args: argv, ExpectError: expectError, ExpectOutput: expectOutput}})
		return err
	}
	if stdin, err = expand(stdin, s.vars); err != nil {
		return err
	}
	const eof = "KUBELAB_MANIFEST_EOF"
	if strings.Contains(stdin, eof) {
		return fmt.Errorf("the manifest must not contain %s", eof)
	}
	var cmd strings.Builder
	cmd.WriteString(`$KUBECTL`)
	for _, a := range argv {
		cmd.WriteString(" " + shellQuote(a))
	}
	fmt.Fprintf(&cmd, " <<'%s'\n%s\n%s\n", eof, stdin, eof)
	_, err = s.run(ctx, engine.Operation{
		Description: "kubectl " + expanded + " < manifest",
		Script:      &engine.ScriptOp{Command: cmd.String(), ExpectError: expectError, ExpectOutput: expectOutput},
	})
	return err
}

// outcomeStep is "it fails", "it succeeds" and "the output matches": the
// kubectl step before it already checked them.
func outcomeStep(ctx context.Context, _ string) error {
	return withScenario(ctx, func(s *scenario) error {
		if _, ok := s.follows[s.steps[s.cur].Id]; !ok {
			return fmt.Errorf("%q must directly follow \"I run kubectl ...\" (or another outcome step after it)", s.steps[s.cur].Text)
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
	op := engine.Operation{Kubectl: &engine.KubectlOp{Args: argv, ExpectError: expectError, ExpectOutput: expectOutput}}
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
