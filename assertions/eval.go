package assertions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"kubelab.dev/kubelab/report"
)

type identVisitor struct{ ids []string }

func (v *identVisitor) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok {
		v.ids = append(v.ids, id.Value)
	}
}

func identifiers(p *vm.Program) []string {
	v := &identVisitor{}
	node := p.Node()
	ast.Walk(&node, v)
	return v.ids
}

// env builds the runtime environment for one evaluation; ls (may be nil)
// collects its failed lookups.
func env(ctx context.Context, c *Compiled, v View, bindings map[string]any, ls *lookups) map[string]any {
	e := funcs(ctx, v, ls)
	for name := range c.uses {
		e[name] = lazyVars[name](ctx, v, ls)
	}
	for k, b := range bindings {
		e[k] = b
	}
	return e
}

// Eval evaluates c once against a view of the cluster; ctx bounds the
// view's lookups. A failed lookup leaves its best value in the evaluation
// (Explain reports it). A panic while evaluating (in the view or the VM)
// is an error, never a crash of the run.
func Eval(ctx context.Context, c *Compiled, v View, bindings map[string]any) (out any, err error) {
	out, _, err = eval(ctx, c, v, bindings)
	return out, err
}

// eval runs c over v and returns its value and the lookups that failed.
// A lookup that failed once ctx was done (a wait's last evaluation, after
// its deadline) read nothing of the cluster: its zero value would make
// get(...) == nil hold for an object that is there, so the evaluation is
// the context's error instead.
func eval(ctx context.Context, c *Compiled, v View, bindings map[string]any) (out any, ls *lookups, err error) {
	ls = &lookups{}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("evaluate %q: the expression evaluator failed: %v", c.Source, r)
		}
	}()
	out, err = expr.Run(c.Program, env(ctx, c, v, bindings, ls))
	if err != nil {
		return nil, ls, fmt.Errorf("evaluate %q: %w", c.Source, err)
	}
	if len(ls.errs) > 0 && ctx.Err() != nil {
		return nil, ls, fmt.Errorf("evaluate %q: %w", c.Source, ctx.Err())
	}
	return out, ls, nil
}

// EvalStrict is Eval, but a lookup that failed (a component that does not
// answer, a metric it lacks, a node without internals) is an error that
// names it, not its zero value: for people asking what an expression
// sees, where a wait or assert would explain the failure instead.
func EvalStrict(ctx context.Context, c *Compiled, v View, bindings map[string]any) (any, error) {
	out, ls, err := eval(ctx, c, v, bindings)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, le := range ls.errs {
		errs = append(errs, le)
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	return out, nil
}

// Holds evaluates a boolean expression.
func Holds(ctx context.Context, c *Compiled, v View, bindings map[string]any) (bool, error) {
	out, err := Eval(ctx, c, v, bindings)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("evaluate %q: got %T, want bool", c.Source, out)
	}
	return b, nil
}

// Observation is the value of one sub-expression at an evaluation: the
// report's, which shows those of a failed check as they were.
type Observation = report.Observation

// Explain evaluates the interesting sub-expressions of c (operands of
// comparisons and logical operators, calls, member accesses) so a failure
// can say what was observed, e.g. `len(endpoints("web")) = 2`.
// A lookup that failed is reported too: a variable's (raft) as its own
// observation, a call's after the value of the sub-expression that made
// it. A panic while building the environment ends the explanation early.
func Explain(ctx context.Context, c *Compiled, v View, bindings map[string]any) (out []Observation) {
	defer func() {
		if r := recover(); r != nil {
			out = append(out, Observation{Expr: c.Source, Value: fmt.Sprintf("error: %v", r)})
		}
	}()
	root := c.Program.Node()
	var subs []ast.Node
	var walk func(n ast.Node, depth int)
	walk = func(n ast.Node, depth int) {
		if depth > 4 {
			return
		}
		switch x := n.(type) {
		case *ast.BinaryNode:
			walk(x.Left, depth+1)
			walk(x.Right, depth+1)
			return
		case *ast.UnaryNode:
			walk(x.Node, depth+1)
			return
		case *ast.ConstantNode, *ast.IntegerNode, *ast.FloatNode, *ast.StringNode, *ast.BoolNode, *ast.NilNode, *ast.PredicateNode:
			return
		}
		if n != root {
			subs = append(subs, n)
			return
		}
		// The root's own value is known (false): explain what it was
		// made of instead, e.g. pod("web") in pod("web").ready.
		for _, o := range operands(n) {
			walk(o, depth+1)
		}
	}
	walk(root, 0)
	ls := &lookups{}
	e := env(ctx, c, v, bindings, ls)
	for _, le := range ls.errs {
		out = append(out, Observation{Expr: le.what(), Value: "lookup failed: " + le.err.Error()})
	}
	seen := map[string]bool{}
	for _, n := range subs {
		src := n.String()
		if seen[src] {
			continue
		}
		seen[src] = true
		p, err := compileProgram(src, expr.Env(e))
		if err != nil {
			continue
		}
		before := len(ls.errs)
		val := observe(p, e)
		for _, le := range ls.errs[before:] {
			val += fmt.Sprintf(" (lookup %s failed: %v)", le.what(), le.err)
		}
		out = append(out, Observation{Expr: src, Value: val})
	}
	return out
}

// operands are the sub-expressions a call or member access is made of:
// the object of a member access, the arguments of a call.
func operands(n ast.Node) []ast.Node {
	switch x := n.(type) {
	case *ast.MemberNode:
		return []ast.Node{x.Node}
	case *ast.CallNode:
		return x.Arguments
	case *ast.BuiltinNode:
		return x.Arguments
	case *ast.ChainNode:
		return operands(x.Node)
	}
	return nil
}

// observe runs one sub-expression of an explanation and formats its value
// or its error; a panic is an error too.
func observe(p *vm.Program, e map[string]any) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("error: %v", r)
		}
	}()
	val, err := expr.Run(p, e)
	if err != nil {
		return "error: " + err.Error()
	}
	return Format(val)
}

// Format renders a value compactly for people: structs as JSON with
// their expr names, long lists shortened.
func Format(v any) string {
	if v == nil {
		return "nil"
	}
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(exprView(reflect.ValueOf(v)))
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 400 {
		s = s[:397] + "..."
	}
	return s
}

// Pretty renders a value as Format does, whole: structures as indented
// JSON keyed by the names expressions use (kubelab eval).
func Pretty(v any) string {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64:
		return Format(v)
	}
	b, err := json.MarshalIndent(Plain(v), "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Plain is a value with its structs turned into maps keyed by the names
// expressions use, for encoding (kubelab eval -o json).
func Plain(v any) any {
	if v == nil {
		return nil
	}
	return exprView(reflect.ValueOf(v))
}

// exprView converts structs to maps keyed by their expr tags, so values
// print with the names expressions use.
func exprView(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return exprView(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Tag.Get("expr")
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if fv.IsZero() && fv.Kind() != reflect.Bool && fv.Kind() != reflect.Int {
				continue
			}
			m[name] = exprView(fv)
		}
		return m
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = exprView(v.Index(i))
		}
		return out
	case reflect.Map:
		m := map[string]any{}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			m[fmt.Sprint(k.Interface())] = exprView(v.MapIndex(k))
		}
		return m
	}
	return v.Interface()
}

// String renders observations one per line.
func String(obs []Observation) string {
	var b strings.Builder
	for _, o := range obs {
		fmt.Fprintf(&b, "  %s = %s\n", o.Expr, o.Value)
	}
	return b.String()
}
