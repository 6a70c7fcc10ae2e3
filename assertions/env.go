package assertions

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// View is the read side of a cluster that expressions query. Each method
// is one function or variable of the environment; Env documents them.
type View interface {
	Pods(namespace, selector string) []Pod
	Pod(namespace, name string) Pod
	Nodes() []Node
	Node(name string) Node
	Deployment(namespace, name string) Deployment
	ReplicaSets(namespace, selector string) []ReplicaSet
	Endpoints(namespace, service string) []Endpoint
	Lease(namespace, name string) Lease
	Events(reason string) []Event
	Raft() Raft
	Components() []Component
	Component(name string) Component
	APIServers() []APIServer
	// Audit lists the requests the apiservers' audit logs recorded that
	// match every key of filter, oldest first.
	Audit(filter map[string]any) []AuditEvent
	// Trace is the chain of writes, from the audit logs, that made a
	// Deployment run.
	Trace(namespace, name string) Trace
	Elapsed() float64
}

// DefaultNamespace is where pods(), deployment() and endpoints() look
// unless told otherwise.
const DefaultNamespace = "default"

// funcs is the environment's function table, built over a View. Keys are
// the names expressions use.
func funcs(v View) map[string]any {
	return map[string]any{
		// pods("app=web") lists pods in "default" matching a label selector ("" = all).
		"pods": func(selector string) []Pod { return v.Pods(DefaultNamespace, selector) },
		// podsIn("kube-system", "k8s-app=dns") lists pods in a namespace.
		"podsIn": func(namespace, selector string) []Pod { return v.Pods(namespace, selector) },
		// pod("web-0") gets one pod in "default"; .phase is "" if it does not exist.
		"pod":   func(name string) Pod { return v.Pod(DefaultNamespace, name) },
		"nodes": func() []Node { return v.Nodes() },
		// node("worker-1").ready / .unschedulable / .taints
		"node": func(name string) Node { return v.Node(name) },
		// deployment("web").available
		"deployment": func(name string) Deployment { return v.Deployment(DefaultNamespace, name) },
		// replicasets("app=web") lists ReplicaSets in "default" by label selector.
		"replicasets": func(selector string) []ReplicaSet { return v.ReplicaSets(DefaultNamespace, selector) },
		// endpoints("web") lists the READY endpoints of Service "web".
		"endpoints": func(service string) []Endpoint {
			var ready []Endpoint
			for _, e := range v.Endpoints(DefaultNamespace, service) {
				if e.Ready {
					ready = append(ready, e)
				}
			}
			return ready
		},
		// allEndpoints("web") includes not-ready endpoints.
		"allEndpoints": func(service string) []Endpoint { return v.Endpoints(DefaultNamespace, service) },
		// leader("kube-scheduler") is the component holding that kube-system lease.
		"leader": func(lease string) string { return v.Lease("kube-system", lease).Component },
		// lease("kube-node-lease/worker-1") or lease("kube-scheduler") (kube-system).
		"lease": func(name string) Lease {
			ns, n := "kube-system", name
			for i := range name {
				if name[i] == '/' {
					ns, n = name[:i], name[i+1:]
				}
			}
			return v.Lease(ns, n)
		},
		// events("Evicted") lists events with that reason ("" = all).
		"events":     func(reason string) []Event { return v.Events(reason) },
		"components": func() []Component { return v.Components() },
		// component("etcd-1").state
		"component":  func(name string) Component { return v.Component(name) },
		"apiservers": func() []APIServer { return v.APIServers() },
		// audit({user: "system:serviceaccount:team:reader", verb: "delete"})
		// lists the matching requests of the apiservers' audit logs:
		// .code, .refusal ("authorization", "admission", "validation"...),
		// .decision, .why, .message, .groups, .userAgent, .annotations.
		"audit": func(filter map[string]any) []AuditEvent { return v.Audit(filter) },
		// trace("Deployment/web") is the chain of writes that made it run,
		// from the audit logs: .kinds (deployment, replicaset, pod,
		// binding, running, endpointslice, in the order they first
		// happened), .first.binding.actor, .hops.
		"trace": func(ref string) Trace {
			ns, name, err := parseTraceRef(ref)
			if err != nil {
				return emptyTrace()
			}
			return v.Trace(ns, name)
		},
	}
}

// Variables (not functions) of the environment, computed only when an
// expression uses them.
var lazyVars = map[string]func(View) any{
	"raft":    func(v View) any { return v.Raft() },
	"elapsed": func(v View) any { return v.Elapsed() },
}

// Names lists every function and variable of the environment, sorted
// (for docs and "did you mean" hints).
func Names() []string {
	var out []string
	for k := range funcs(nil) {
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
	env := funcs(nil)
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
	uses  map[string]bool
	polls bool
}

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
	c := &Compiled{Source: src, Program: prog, uses: map[string]bool{}}
	if t := prog.Node().Type(); t != nil && t.Kind() != reflect.Interface {
		c.Type = t
	}
	for _, id := range identifiers(prog) {
		if _, ok := lazyVars[id]; ok {
			c.uses[id] = true
		}
		if unwatched[id] {
			c.polls = true
		}
	}
	return c, nil
}

// unwatched names read state that no informer watches: expressions using
// them must be re-evaluated by polling.
var unwatched = map[string]bool{"raft": true, "elapsed": true, "components": true, "component": true, "apiservers": true}

// Polls reports whether the expression reads state that is not watched
// (the Raft table, components, apiserver health, elapsed time), so a wait
// must poll it rather than only react to watch events.
func (c *Compiled) Polls() bool { return c.polls }
