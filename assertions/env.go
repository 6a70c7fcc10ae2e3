package assertions

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"k8s.io/apimachinery/pkg/api/resource"
)

// View is the read side of a cluster that expressions query. Each method
// is one function or variable of the environment (Env documents them) and
// takes the evaluation's context. A lookup that fails (a cache, an etcd
// member, an apiserver that does not answer) returns the best value it has
// and the error; the evaluation goes on with the value and Explain reports
// the error. An object that does not exist is not an error: its zero value
// says so (exists false, phase "").
type View interface {
	Pods(ctx context.Context, namespace, selector string) ([]Pod, error)
	Pod(ctx context.Context, namespace, name string) (Pod, error)
	Nodes(ctx context.Context) ([]Node, error)
	Node(ctx context.Context, name string) (Node, error)
	Deployment(ctx context.Context, namespace, name string) (Deployment, error)
	ReplicaSets(ctx context.Context, namespace, selector string) ([]ReplicaSet, error)
	Endpoints(ctx context.Context, namespace, service string) ([]Endpoint, error)
	Lease(ctx context.Context, namespace, name string) (Lease, error)
	Events(ctx context.Context, reason string) ([]Event, error)
	Raft(ctx context.Context) (Raft, error)
	Components(ctx context.Context) ([]Component, error)
	Component(ctx context.Context, name string) (Component, error)
	APIServers(ctx context.Context) ([]APIServer, error)
	// Audit lists the requests the apiservers' audit logs recorded that
	// match every key of filter, oldest first.
	Audit(ctx context.Context, filter map[string]any) ([]AuditEvent, error)
	// Trace is the chain of writes, from the audit logs, that made a
	// Deployment run.
	Trace(ctx context.Context, namespace, name string) (Trace, error)
	// IPTables is a real node's nat table, CRI its container runtime's
	// sandboxes and containers (cluster.ErrNoNodeInternals on simulated
	// nodes).
	IPTables(ctx context.Context, node string) (IPTables, error)
	CRI(ctx context.Context, node string) (CRI, error)
	// Scheduling is the scheduler's last decision about a pod, plugin by
	// plugin (Found false until it tried the pod).
	Scheduling(ctx context.Context, namespace, name string) (Scheduling, error)
	// Metrics is the Prometheus text a control-plane component serves at
	// /metrics.
	Metrics(ctx context.Context, component string) ([]byte, error)
	// Get reads any object (nil when it does not exist); List lists
	// objects by label selector. Both ask the apiserver at each
	// evaluation: they are polled, not watched.
	Get(ctx context.Context, resource, namespace, name string) (map[string]any, error)
	List(ctx context.Context, resource, namespace, selector string) ([]map[string]any, error)
	// Can asks the apiserver, with a SubjectAccessReview, whether user may
	// verb resource in namespace.
	Can(ctx context.Context, user, verb, resource, namespace string) (bool, error)
	Elapsed() float64
}

// DefaultNamespace is where pods(), deployment() and endpoints() look
// unless told otherwise (or the View is Namespaced).
const DefaultNamespace = "default"

// lookupError is a View lookup that failed during an evaluation.
type lookupError struct {
	name string // the function (pods) or variable (raft)
	args []any
	err  error
}

// what renders the lookup as the expression wrote it: pods("app=web"),
// raft.
func (e lookupError) what() string {
	if _, variable := lazyVars[e.name]; variable {
		return e.name
	}
	args := make([]string, len(e.args))
	for i, a := range e.args {
		args[i] = Literal(a)
	}
	return e.name + "(" + strings.Join(args, ", ") + ")"
}

// Literal writes a value as an expression would: "x", 3, or
// {"le": "0.1"} for a map (keys sorted).
func Literal(a any) string {
	m, ok := a.(map[string]any)
	if !ok {
		return fmt.Sprintf("%#v", a)
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q: %s", k, Literal(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Error says which lookup failed and why: pods("app=web") failed: ...
func (e lookupError) Error() string { return e.what() + " failed: " + e.err.Error() }

// Unwrap is the lookup's own error.
func (e lookupError) Unwrap() error { return e.err }

// lookups collects the failed lookups of one evaluation (nil drops them).
type lookups struct{ errs []lookupError }

// lookup returns a function that passes a View result's value through and
// notes its error as a failed lookup of name(args...).
func lookup[T any](ls *lookups, name string, args ...any) func(T, error) T {
	return func(v T, err error) T {
		if err != nil && ls != nil {
			ls.errs = append(ls.errs, lookupError{name: name, args: args, err: err})
		}
		return v
	}
}

// strict is lookup for the functions whose zero value would be an answer
// (get's nil says "does not exist", can's false "may not", metric's 0):
// their failed lookup fails the evaluation, which a wait keeps waiting
// past and an assert reports, instead of reading as that answer.
func strict[T any](ls *lookups, name string, args ...any) func(T, error) (T, error) {
	return func(v T, err error) (T, error) {
		if err != nil {
			le := lookupError{name: name, args: args, err: err}
			if ls != nil {
				ls.errs = append(ls.errs, le)
			}
			return v, le
		}
		return v, nil
	}
}

// funcs is the environment's function table, built over a View for one
// evaluation (ctx bounds its lookups; ls collects their errors). Keys are
// the names expressions use.
func funcs(ctx context.Context, v View, ls *lookups) map[string]any {
	def := DefaultNamespace
	if d, ok := v.(Namespaced); ok && d.Namespace() != "" {
		def = d.Namespace()
	}
	ns := func(namespace []string) string { return nsOr(namespace, def) }
	fs := map[string]any{
		// pods("app=web") lists pods in "default" matching a label selector
		// ("" = all); pods("app=web", "team") in namespace team.
		"pods": func(selector string, namespace ...string) []Pod {
			return lookup[[]Pod](ls, "pods", args(selector, namespace)...)(v.Pods(ctx, ns(namespace), selector))
		},
		// podsIn("kube-system", "k8s-app=dns") lists pods in a namespace.
		"podsIn": func(namespace, selector string) []Pod {
			return lookup[[]Pod](ls, "podsIn", namespace, selector)(v.Pods(ctx, namespace, selector))
		},
		// pod("web-0") gets one pod in "default"; .phase is "" if it does not exist.
		"pod": func(name string, namespace ...string) Pod {
			return lookup[Pod](ls, "pod", args(name, namespace)...)(v.Pod(ctx, ns(namespace), name))
		},
		"nodes": func() []Node { return lookup[[]Node](ls, "nodes")(v.Nodes(ctx)) },
		// node("worker-1").ready / .unschedulable / .taints
		"node": func(name string) Node { return lookup[Node](ls, "node", name)(v.Node(ctx, name)) },
		// deployment("web").available
		// deployment("web", "team") in namespace team; .revision, .images.
		"deployment": func(name string, namespace ...string) Deployment {
			return lookup[Deployment](ls, "deployment", args(name, namespace)...)(v.Deployment(ctx, ns(namespace), name))
		},
		// replicasets("app=web") lists ReplicaSets in "default" by label selector.
		"replicasets": func(selector string, namespace ...string) []ReplicaSet {
			return lookup[[]ReplicaSet](ls, "replicasets", args(selector, namespace)...)(v.ReplicaSets(ctx, ns(namespace), selector))
		},
		// endpoints("web") lists the READY endpoints of Service "web".
		"endpoints": func(service string, namespace ...string) []Endpoint {
			var ready []Endpoint
			for _, e := range lookup[[]Endpoint](ls, "endpoints", args(service, namespace)...)(v.Endpoints(ctx, ns(namespace), service)) {
				if e.Ready {
					ready = append(ready, e)
				}
			}
			return ready
		},
		// allEndpoints("web") includes not-ready endpoints.
		"allEndpoints": func(service string, namespace ...string) []Endpoint {
			return lookup[[]Endpoint](ls, "allEndpoints", args(service, namespace)...)(v.Endpoints(ctx, ns(namespace), service))
		},
		// quantity("250m") is a resource quantity as a number (0.25 CPU;
		// quantity("128Mi") is 134217728 bytes), to compare the strings
		// requests, limits, capacity and quota usage are written in.
		"quantity": func(q any) (float64, error) {
			switch q := q.(type) {
			case int:
				return float64(q), nil
			case float64:
				return q, nil
			case string:
				v, err := resource.ParseQuantity(q)
				if err != nil {
					return 0, fmt.Errorf("quantity(%q): %w", q, err)
				}
				return v.AsApproximateFloat64(), nil
			}
			return 0, fmt.Errorf("quantity(%v): want a string such as \"250m\" or \"128Mi\", got %T", q, q)
		},
		// get("poddisruptionbudgets", "web-pdb", "team") is any object as a
		// map (nil when it does not exist): .spec, .status, .metadata...
		// Resources are named as kubectl names them (plural, kind, short
		// name, "deployments.apps"). Polled, not watched.
		"get": func(resource, name string, namespace ...string) (map[string]any, error) {
			return strict[map[string]any](ls, "get", append([]any{resource, name}, strs(namespace)...)...)(v.Get(ctx, resource, ns(namespace), name))
		},
		// list("configmaps", "app=web", "team") lists objects by label
		// selector ("" = all), as maps. Polled, not watched.
		"list": func(resource, selector string, namespace ...string) ([]map[string]any, error) {
			return strict[[]map[string]any](ls, "list", append([]any{resource, selector}, strs(namespace)...)...)(v.List(ctx, resource, ns(namespace), selector))
		},
		// can("system:serviceaccount:team:reader", "delete", "pods", "team")
		// asks the apiserver's authorizers (a SubjectAccessReview); ""
		// namespace for cluster-scoped resources. Polled.
		"can": func(user, verb, resource, namespace string) (bool, error) {
			return strict[bool](ls, "can", user, verb, resource, namespace)(v.Can(ctx, user, verb, resource, namespace))
		},
	}
	maps.Copy(fs, machineryFuncs(ctx, v, ls, def))
	return fs
}

// machineryFuncs are the functions about the machinery rather than
// objects: leases, events, components, node internals, the scheduler's
// decisions and the audit log.
func machineryFuncs(ctx context.Context, v View, ls *lookups, def string) map[string]any {
	ns := func(namespace []string) string { return nsOr(namespace, def) }
	return map[string]any{
		// leader("kube-scheduler") is the component holding that kube-system lease.
		"leader": func(lease string) string {
			return lookup[Lease](ls, "leader", lease)(v.Lease(ctx, "kube-system", lease)).Component
		},
		// lease("kube-node-lease/worker-1") or lease("kube-scheduler") (kube-system).
		"lease": func(name string) Lease {
			ns, n := "kube-system", name
			for i := range name {
				if name[i] == '/' {
					ns, n = name[:i], name[i+1:]
				}
			}
			return lookup[Lease](ls, "lease", name)(v.Lease(ctx, ns, n))
		},
		// events("Evicted") lists events with that reason ("" = all).
		"events":     func(reason string) []Event { return lookup[[]Event](ls, "events", reason)(v.Events(ctx, reason)) },
		"components": func() []Component { return lookup[[]Component](ls, "components")(v.Components(ctx)) },
		// component("etcd-1").state
		"component": func(name string) Component {
			return lookup[Component](ls, "component", name)(v.Component(ctx, name))
		},
		"apiservers": func() []APIServer { return lookup[[]APIServer](ls, "apiservers")(v.APIServers(ctx)) },
		// metric("etcd-1", "etcd_server_leader_changes_seen_total") is a
		// control-plane component's metric, read from its /metrics: the
		// sum of its series whose labels include those of the optional
		// map, e.g. metric("kube-apiserver-1", "apiserver_request_total",
		// {"verb": "POST", "resource": "configmaps"}); NAME_count and
		// NAME_sum of a histogram. Polled.
		"metric": func(component, name string, labels ...map[string]any) (float64, error) {
			var want map[string]any
			if len(labels) > 0 {
				want = labels[0]
			}
			largs := []any{component, name}
			if want != nil {
				largs = append(largs, want)
			}
			text, err := v.Metrics(ctx, component)
			if err != nil {
				return strict[float64](ls, "metric", largs...)(0, err)
			}
			return strict[float64](ls, "metric", largs...)(MetricValue(text, component, name, want))
		},
		// iptables("worker-1") is the node's nat table as kube-proxy wrote it:
		// .services["default/web"].endpoints, .chain, .seps; .chains (docker
		// backend: simulated nodes have none).
		"iptables": func(node string) IPTables {
			return lookup[IPTables](ls, "iptables", node)(v.IPTables(ctx, node))
		},
		// cri("worker-1") is what the node's container runtime reports over
		// the CRI: .sandboxes (pause processes, with .netns) and .containers
		// (docker backend).
		"cri": func(node string) CRI { return lookup[CRI](ls, "cri", node)(v.CRI(ctx, node)) },
		// scheduling("web-0") is the real scheduler's last decision about
		// the pod, plugin by plugin: .selected, .filtered[node].plugin and
		// .reason, .scores[node][plugin], .weights, .total[node], .best.
		"scheduling": func(name string, namespace ...string) Scheduling {
			return lookup[Scheduling](ls, "scheduling", args(name, namespace)...)(v.Scheduling(ctx, ns(namespace), name))
		},
		// audit({user: "system:serviceaccount:team:reader", verb: "delete"})
		// lists the matching requests of the apiservers' audit logs:
		// .code, .refusal ("authorization", "admission", "validation"...),
		// .decision, .why, .message, .groups, .userAgent, .annotations.
		"audit": func(filter map[string]any) []AuditEvent {
			return lookup[[]AuditEvent](ls, "audit", filter)(v.Audit(ctx, filter))
		},
		// trace("Deployment/web") is the chain of writes that made it run,
		// from the audit logs: .kinds (deployment, replicaset, pod,
		// binding, running, endpointslice, in the order they first
		// happened), .first.binding.actor, .hops.
		"trace": func(ref string) Trace {
			ns, name, err := parseTraceRef(ref, def)
			if err != nil {
				return lookup[Trace](ls, "trace", ref)(emptyTrace(), err)
			}
			return lookup[Trace](ls, "trace", ref)(v.Trace(ctx, ns, name))
		},
	}
}

// Namespaced is a View whose expressions default to a namespace other
// than DefaultNamespace (a run's own namespace on a shared cluster).
type Namespaced interface {
	Namespace() string
}

// nsOr is a helper's optional namespace argument: the first one given, or
// def.
func nsOr(namespace []string, def string) string {
	if len(namespace) > 0 && namespace[0] != "" {
		return namespace[0]
	}
	return def
}

// args are a lookup's arguments as the expression wrote them.
func args(first string, namespace []string) []any {
	return append([]any{first}, strs(namespace)...)
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Variables (not functions) of the environment, computed only when an
// expression uses them.
var lazyVars = map[string]func(context.Context, View, *lookups) any{
	"raft":    func(ctx context.Context, v View, ls *lookups) any { return lookup[Raft](ls, "raft")(v.Raft(ctx)) },
	"elapsed": func(_ context.Context, v View, _ *lookups) any { return v.Elapsed() },
}

// Names lists every function and variable of the environment, sorted
// (for docs and "did you mean" hints).
func Names() []string {
	var out []string
	for k := range funcs(nil, nil, nil) {
		out = append(out, k)
	}
	for k := range lazyVars {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// typeEnv is the environment used to type-check: the function table over
// a nil view, the variables as zero values, plus the bindings' types.
func typeEnv(bindings map[string]reflect.Type) (map[string]any, error) {
	env := funcs(nil, nil, nil)
	env["raft"] = Raft{}
	env["elapsed"] = float64(0)
	for name, t := range bindings {
		if _, clash := env[name]; clash {
			return nil, fmt.Errorf("binding %q clashes with a built-in name", name)
		}
		if t == nil {
			env[name] = (*any)(nil)
			continue
		}
		env[name] = reflect.Zero(t).Interface()
	}
	return env, nil
}

// Compiled is a type-checked expression.
type Compiled struct {
	Source  string
	Program *vm.Program
	// Type is the static type of the result (nil when unknown).
	Type reflect.Type
	// uses says which lazy variables the expression reads.
	uses          map[string]bool
	polls         bool
	nodeInternals bool
	idents        map[string]bool
}

// NeedsAny reports which of names (functions or variables of the
// environment) the expression uses.
func (c *Compiled) NeedsAny(names ...string) []string {
	var out []string
	for _, n := range names {
		if c.idents[n] {
			out = append(out, n)
		}
	}
	return out
}

// nodeInternals names the functions that look inside real nodes.
var nodeInternals = map[string]bool{"iptables": true, "cri": true}

// NeedsNodeInternals reports whether the expression looks inside nodes
// (iptables, cri): only backends with real nodes can evaluate it.
func (c *Compiled) NeedsNodeInternals() bool { return c.nodeInternals }

// Compile type-checks src against the environment plus bindings (name ->
// static type, as returned by an earlier Compile). With asBool the result
// must be a bool (wait, assert, error); otherwise any value (record).
func Compile(src string, bindings map[string]reflect.Type, asBool bool) (*Compiled, error) {
	env, err := typeEnv(bindings)
	if err != nil {
		return nil, err
	}
	filters := &checkAuditFilters{}
	opts := []expr.Option{expr.Env(env), expr.Patch(filters)}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := compileProgram(src, opts...)
	if err != nil {
		return nil, err
	}
	if filters.err != nil {
		return nil, filters.err
	}
	if err := checkArity(prog); err != nil {
		return nil, err
	}
	c := &Compiled{Source: src, Program: prog, uses: map[string]bool{}, idents: map[string]bool{}}
	if t := prog.Node().Type(); t != nil && t.Kind() != reflect.Interface {
		c.Type = t
	}
	for _, id := range identifiers(prog) {
		c.idents[id] = true
		if _, ok := lazyVars[id]; ok {
			c.uses[id] = true
		}
		if unwatched[id] {
			c.polls = true
		}
		if nodeInternals[id] {
			c.nodeInternals = true
		}
	}
	return c, nil
}

// unwatched names read state that no informer watches: expressions using
// them must be re-evaluated by polling.
var unwatched = map[string]bool{"raft": true, "elapsed": true, "components": true, "component": true, "apiservers": true,
	"iptables": true, "cri": true, "get": true, "list": true, "can": true, "probes": true}

// maxArgs bounds the variadic helpers: one optional namespace each.
var maxArgs = map[string]int{"pods": 2, "pod": 2, "deployment": 2, "replicasets": 2, "endpoints": 2, "allEndpoints": 2, "get": 3, "list": 3}

// checkArity reports a call of a helper with more arguments than it
// takes: the type checker accepts any number for a variadic function.
func checkArity(p *vm.Program) error {
	v := &callVisitor{}
	node := p.Node()
	ast.Walk(&node, v)
	return v.err
}

type callVisitor struct{ err error }

func (v *callVisitor) Visit(n *ast.Node) {
	c, ok := (*n).(*ast.CallNode)
	if !ok || v.err != nil {
		return
	}
	id, ok := c.Callee.(*ast.IdentifierNode)
	if !ok {
		return
	}
	if max, variadic := maxArgs[id.Value]; variadic && len(c.Arguments) > max {
		v.err = fmt.Errorf("%s takes at most %d arguments (the last is an optional namespace), got %d", id.Value, max, len(c.Arguments))
	}
}

// Polls reports whether the expression reads state that is not watched
// (the Raft table, components, apiserver health, elapsed time), so a wait
// must poll it rather than only react to watch events.
func (c *Compiled) Polls() bool { return c.polls }
