package load

import (
	"reflect"
	"regexp"
	"sort"
	"time"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/ops"
)

// opChecker is the checker as one operation's Validate sees it: scoped to
// the operation's body at base, e.g. spec.steps[0].try[1].kill.
type opChecker struct {
	c    *checker
	op   *ops.Operation
	base string
}

var _ ops.Checker = (*opChecker)(nil)

func (o *opChecker) path(field string) string {
	if field == "" {
		return o.base
	}
	return joinPath(o.base, field)
}

func (o *opChecker) Errorf(field, format string, args ...any) {
	o.c.errorAt(o.path(field), format, args...)
}

func (o *opChecker) Suggest(name string, candidates []string) string {
	return suggest(name, candidates)
}

// Node and Target leave templated names to the run (their templates are
// checked on their own).
func (o *opChecker) Node(name, field string) {
	if !hasTemplate(name) {
		o.c.node(name, o.path(field))
	}
}

func (o *opChecker) Target(name, field string) {
	if !hasTemplate(name) {
		o.c.target(name, o.path(field))
	}
}

func (o *opChecker) Regexp(src, field string) *regexp.Regexp {
	return o.c.regexp(src, o.path(field))
}

func (o *opChecker) Expr(src, field string, asBool bool) *assertions.Compiled {
	return o.c.expr(src, o.path(field), asBool)
}

func (o *opChecker) Bind(name string, comp *assertions.Compiled, field string) {
	o.c.bind(name, comp, o.path(field))
}

func (o *opChecker) BindType(name string, t reflect.Type, field string) {
	if name == "" {
		return
	}
	if !identifierRE.MatchString(name) || o.c.reserved[name] {
		o.c.bind(name, nil, o.path(field)) // reports the name
		return
	}
	o.c.bindType(name, t, false, o.path(field))
}

func (o *opChecker) Bound(name string, t reflect.Type, field, what string) {
	if name == "" || hasTemplate(name) {
		return
	}
	got, bound := o.c.bindings[name]
	switch {
	case bound && got == t:
		return
	case bound:
		o.Errorf(field, "%q is bound to a %s (at line %d), not a %s", name, typeName(got), o.c.boundAt[name].Line, what)
		return
	}
	if at, later := o.c.recorded[name]; later {
		o.Errorf(field, "%s %q is taken after this operation (at line %d)", what, name, at.Line)
		return
	}
	var names []string
	for n, bt := range o.c.bindings {
		if bt == t {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	o.Errorf(field, "unknown %s %q: the %ss taken before this are %s%s", what, name, what, orNone(names), suggest(name, names))
}

func (o *opChecker) Objects(file, manifest, field string) []ops.Object {
	return o.c.objects(file, manifest, o.path(field))
}

func (o *opChecker) Scalar(field string) (string, bool) {
	n := o.c.nodes[o.path(field)]
	if n == nil || isNull(n) || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

func (o *opChecker) YAML(src, field, what string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		line, msg := yamlError(err)
		o.Errorf(field, "invalid %s: %s (line %d of the %s)", what, msg, line, what)
		return nil
	}
	return &doc
}

func (o *opChecker) Describe(n *yaml.Node) string { return describeNode(n) }

func (o *opChecker) Timeout() time.Duration { return o.op.Timeout.Duration }
