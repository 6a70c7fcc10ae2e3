package assertions

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"

	obs "kubelab.dev/kubelab/observe"
)

// AuditEvent is one request through an apiserver's pipeline, from its
// audit log: see obs.AuditEvent.
type AuditEvent = obs.AuditEvent

// Trace is the chain of writes behind a Deployment: see obs.Chain.
type Trace = obs.Chain

// TraceHop is one write of a Trace.
type TraceHop = obs.Hop

// parseTraceRef reads "Deployment/name" or "namespace/Deployment/name".
// def is the namespace of the first form.
func parseTraceRef(ref, def string) (ns, name string, err error) {
	parts := strings.Split(ref, "/")
	switch {
	case len(parts) == 2 && parts[0] == "Deployment" && parts[1] != "":
		return def, parts[1], nil
	case len(parts) == 3 && parts[1] == "Deployment" && parts[0] != "" && parts[2] != "":
		return parts[0], parts[2], nil
	}
	return "", "", fmt.Errorf("trace(%q): want \"Deployment/NAME\" or \"NAMESPACE/Deployment/NAME\"", ref)
}

// auditKeys are the keys an audit() filter may use, each matching the
// event field of that name exactly (code as a number).
var auditKeys = map[string]func(AuditEvent) any{
	"user":        func(e AuditEvent) any { return e.User },
	"verb":        func(e AuditEvent) any { return e.Verb },
	"resource":    func(e AuditEvent) any { return e.Resource },
	"subresource": func(e AuditEvent) any { return e.Subresource },
	"group":       func(e AuditEvent) any { return e.Group },
	"namespace":   func(e AuditEvent) any { return e.Namespace },
	"name":        func(e AuditEvent) any { return e.Name },
	"code":        func(e AuditEvent) any { return e.Code },
	"refusal":     func(e AuditEvent) any { return e.Refusal },
	"decision":    func(e AuditEvent) any { return e.Decision },
	"apiserver":   func(e AuditEvent) any { return e.APIServer },
}

// AuditKeys lists the keys an audit() filter accepts, sorted.
func AuditKeys() []string {
	out := make([]string, 0, len(auditKeys))
	for k := range auditKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MatchAudit reports whether e matches every key of filter (unknown keys
// never match; Compile rejects them in literal filters).
func MatchAudit(e AuditEvent, filter map[string]any) bool {
	for k, want := range filter {
		get, ok := auditKeys[k]
		if !ok {
			return false
		}
		got := get(e)
		switch w := want.(type) {
		case int:
			if g, ok := got.(int); !ok || g != w {
				return false
			}
		case float64:
			if g, ok := got.(int); !ok || float64(g) != w {
				return false
			}
		default:
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return false
			}
		}
	}
	return true
}

// checkAuditFilters rejects an audit({...}) call whose literal filter has
// a key the filter does not know, when the expression is compiled.
type checkAuditFilters struct{ err error }

func (c *checkAuditFilters) Visit(node *ast.Node) {
	call, ok := (*node).(*ast.CallNode)
	if !ok || c.err != nil || len(call.Arguments) != 1 {
		return
	}
	id, ok := call.Callee.(*ast.IdentifierNode)
	if ok && id.Value == "trace" {
		if ref, ok := call.Arguments[0].(*ast.StringNode); ok {
			_, _, c.err = parseTraceRef(ref.Value, DefaultNamespace)
		}
		return
	}
	if !ok || id.Value != "audit" {
		return
	}
	m, ok := call.Arguments[0].(*ast.MapNode)
	if !ok {
		return
	}
	for _, p := range m.Pairs {
		pair, ok := p.(*ast.PairNode)
		if !ok {
			continue
		}
		key, ok := pair.Key.(*ast.StringNode)
		if !ok {
			continue
		}
		if _, known := auditKeys[key.Value]; !known {
			c.err = fmt.Errorf("audit filter: unknown key %q (want one of %s)", key.Value, strings.Join(AuditKeys(), ", "))
			return
		}
	}
}

// auditLog is the audit events of a cluster's apiservers, as they are
// written.
type auditLog struct {
	mu     sync.Mutex
	events []AuditEvent
}

func (a *auditLog) add(e AuditEvent) {
	a.mu.Lock()
	a.events = append(a.events, e)
	a.mu.Unlock()
}

func (a *auditLog) match(filter map[string]any) []AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []AuditEvent{}
	for _, e := range a.events {
		if MatchAudit(e, filter) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// tailAudit follows every apiserver's audit log until ctx ends.
func (l *Live) tailAudit(ctx context.Context, logs map[string]string) {
	for name, path := range logs {
		go func() {
			if err := obs.TailAudit(ctx, name, path, func(e AuditEvent) {
				l.audit.add(e)
				l.notify("Audit", nil, e)
			}); err != nil {
				l.auditErr(err)
			}
		}()
	}
}

func (l *Live) auditErr(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.auditFailure = err
}

// Audit implements View. The error is why an audit log could not be
// followed, if one could not: the events may then be incomplete.
func (l *Live) Audit(_ context.Context, filter map[string]any) ([]AuditEvent, error) {
	return l.audit.match(filter), l.auditError()
}

func (l *Live) auditError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.auditFailure
}

// Trace implements View; the error is Audit's.
func (l *Live) Trace(_ context.Context, namespace, name string) (Trace, error) {
	l.audit.mu.Lock()
	events := append([]AuditEvent(nil), l.audit.events...)
	l.audit.mu.Unlock()
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	return obs.NewChain(obs.Trace(events, namespace, name)), l.auditError()
}

func emptyTrace() Trace { return obs.NewChain(nil) }
