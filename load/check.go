package load

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

var (
	dnsLabelRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	identifierRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxNodes and maxMembers bound the topology (as cluster.Topology.Validate
// does) before defaults expand it.
const (
	maxNodes   = cluster.MaxNodes
	maxMembers = 5
)

// checker validates a decoded lab beyond its shape: values, references
// between its parts, expressions and manifests. It fills defaults as it
// goes.
type checker struct {
	*decoder
	dir   string   // directory of the lab file, for relative paths
	lines []string // the lab file, to map inline manifests to its lines

	nodeNames  []string
	components []string
	cpNodes    []string // control-plane nodes of a stacked topology
	etcd       int

	reserved    map[string]bool         // names a binding cannot take
	recorded    map[string]ops.Pos      // every valid record name, first occurrence
	bindings    map[string]reflect.Type // recorded so far, in document order
	boundAt     map[string]ops.Pos      // where each binding got its type
	broken      map[string]bool         // bindings whose expression did not compile
	probes      []string                // probe names started so far, in document order
	backgrounds []string                // background operation names so far
}

func newChecker(d *decoder, dir string, data []byte) *checker {
	c := &checker{
		decoder:  d,
		dir:      dir,
		lines:    strings.Split(string(data), "\n"),
		reserved: map[string]bool{},
		recorded: map[string]ops.Pos{},
		bindings: map[string]reflect.Type{},
		boundAt:  map[string]ops.Pos{},
		broken:   map[string]bool{},
	}
	for _, names := range [][]string{assertions.Names(), builtin.Names, exprKeywords()} {
		for _, n := range names {
			c.reserved[n] = true
		}
	}
	return c
}

// exprKeywords are the words of the expression language that look like
// identifiers.
func exprKeywords() []string {
	return []string{"true", "false", "nil", "not", "in", "and", "or", "matches", "contains",
		"startsWith", "endsWith", "let", "if", "else", "env"}
}

// at is the position of the node at path, or of its closest decoded
// ancestor.
func (c *checker) at(path string) ops.Pos {
	for {
		if n, ok := c.nodes[path]; ok {
			return nodePos(n)
		}
		if path == "" {
			return ops.Pos{Line: 1, Column: 1}
		}
		path = parentPath(path)
	}
}

func (c *checker) errorAt(path, format string, args ...any) {
	c.probs.add(c.file, c.at(path), path, format, args...)
}

func (c *checker) check(l *Lab) {
	c.header(l.APIVersion, l.Kind, v1alpha1.KindLab, l.Metadata.Name)
	c.cluster(&l.Spec.Cluster)
	if l.Spec.Timeout.Duration == 0 {
		l.Spec.Timeout.Duration = DefaultLabTimeout
	}
	l.steps = checkNamed(c, "spec.steps", "step", l.Spec.Steps, func(s *Step) (string, []ops.Operation) { return s.Name, s.Try })
	c.operations(l.Operations())
	l.Source = Source{file: c.file, bindings: c.bindings}
}

// cluster fills the topology's defaults, reports Validate's errors at the
// field they name, and lists the nodes and components operations may name.
func (c *checker) cluster(t *cluster.Topology) {
	if t.Workers > maxNodes {
		c.errorAt("spec.cluster.workers", "want at most %d, got %d", maxNodes, t.Workers)
		t.Workers = maxNodes
	}
	*t = t.WithDefaults()
	for _, err := range t.Validate() {
		field, msg := splitField(err.Error())
		c.errorAt(joinPath("spec.cluster", field), "%s", msg)
	}
	for _, g := range []struct {
		name string
		n    int
	}{{"etcd", t.Etcd}, {"kube-apiserver", t.APIServers}, {"kube-scheduler", t.Schedulers}, {"kube-controller-manager", t.ControllerManagers}} {
		for i := 1; i <= min(g.n, maxMembers); i++ {
			c.components = append(c.components, fmt.Sprintf("%s-%d", g.name, i))
		}
	}
	if t.APIServers > 1 {
		// One apiserver is reached directly, with no balancer in front.
		c.components = append(c.components, "load-balancer")
	}
	for _, n := range t.Nodes {
		c.nodeNames = append(c.nodeNames, n.Name)
	}
	c.components = append(c.components, c.nodeNames...)
	for n := range t.ControlPlaneNodes() {
		c.cpNodes = append(c.cpNodes, n)
	}
	slices.Sort(c.cpNodes)
	c.etcd = t.Etcd
	c.schedulerConfig(t.Scheduler.Config)
	c.extender(t.Scheduler.Extender)
}

// splitField splits a Topology.Validate error such as "etcd: want 1, 3 or
// 5 members, got 2" or `nodes[1].name "w": duplicate` into the field it
// names and the rest.
func splitField(s string) (field, msg string) {
	i := strings.IndexAny(s, " :")
	if i <= 0 {
		return "", s
	}
	return s[:i], strings.TrimPrefix(strings.TrimPrefix(s[i:], ":"), " ")
}

func (c *checker) operation(op *ops.Operation, path string) {
	op.Loaded(c.at(path), nil)
	parts := op.Parts()
	if len(parts) == 0 {
		if n := c.nodes[path]; n != nil && n.Kind == yaml.MappingNode && !c.unknownKey[path] {
			c.errorAt(path, "no operation: want exactly one of %s", strings.Join(ops.OperationKinds(), ", "))
		}
		return
	}
	if len(parts) > 1 {
		var kinds []string
		for _, p := range parts {
			kinds = append(kinds, p.Kind)
		}
		c.errorAt(path, "several operations in one item (%s): want exactly one; give each its own list item", strings.Join(kinds, ", "))
	}
	for _, p := range parts {
		c.body(op, p, joinPath(path, p.Kind))
	}
	c.timeout(op, path)
	if op.Background != "" {
		c.background(op, parts[0], path)
	}
}

var backgroundType = reflect.TypeFor[map[string]assertions.Background]()

// background checks a background operation: a name of its own, and a
// kind whose work can run beside the steps (it binds nothing).
func (c *checker) background(op *ops.Operation, part ops.Part, path string) {
	p := joinPath(path, "background")
	switch {
	case !identifierRE.MatchString(op.Background):
		c.errorAt(p, "invalid background name %q: want an identifier (letters, digits and _, not starting with a digit)", op.Background)
		return
	case part.Kind == "record" || part.Kind == "probe":
		c.errorAt(p, "a %s cannot run in the background (a probe always does)", part.Kind)
		return
	case slices.Contains(c.backgrounds, op.Background):
		c.errorAt(p, "background name %q is already taken by an earlier operation", op.Background)
		return
	}
	if b, ok := part.Op().(ops.Binder); ok {
		if name, field := b.Binding(); name != "" {
			c.errorAt(p, "a background operation cannot bind %q (%s): read its output as background.%s.output", name, field, op.Background)
			return
		}
	}
	c.backgrounds = append(c.backgrounds, op.Background)
	c.bindType(ops.BackgroundBinding, backgroundType, false, p)
}

// body validates one operation's body through its kind.
func (c *checker) body(op *ops.Operation, part ops.Part, p string) {
	if ts := c.templates(part.Spec, p); len(ts) > 0 {
		op.Loaded(op.Pos(), ts)
	}
	part.Op().Validate(&opChecker{c: c, op: op, base: p})
	if pr, ok := part.Spec.(*ops.ProbeOp); ok && identifierRE.MatchString(pr.Name) && !slices.Contains(c.probes, pr.Name) {
		c.probes = append(c.probes, pr.Name)
	}
}

// regexp compiles an expectOutput pattern ("" = none).
func (c *checker) regexp(src, path string) *regexp.Regexp {
	if src == "" {
		return nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		c.errorAt(path, "invalid regular expression: %v", err)
	}
	return re
}

// timeout fills the operation's default timeout, or checks that the
// explicit one leaves room for the operation's own duration.
func (c *checker) timeout(op *ops.Operation, path string) {
	own := op.OwnDuration()
	switch {
	case op.Timeout.Duration == 0:
		op.Timeout.Duration = op.Op().DefaultTimeout() + own
	case own > op.Timeout.Duration:
		c.errorAt(path+".timeout", "timeout %s is shorter than the operation's own duration %s", op.Timeout, own)
	}
}

func (c *checker) node(name, path string) {
	if name == "" || slices.Contains(c.nodeNames, name) {
		return
	}
	c.errorAt(path, "unknown node %q: the topology's nodes are %s%s", name, abbreviate(c.nodeNames), suggest(name, c.nodeNames))
}

func (c *checker) target(name, path string) {
	switch name {
	case "", cluster.TargetEtcdLeader, cluster.TargetSchedulerLeader, cluster.TargetControllerLeader:
		return
	case cluster.TargetEtcdFollower:
		if c.etcd < 2 {
			c.errorAt(path, "%s: the topology has a single etcd member; set spec.cluster.etcd to 3 or 5", name)
		}
		return
	}
	if node, daemon, ok := cluster.SplitNodeDaemon(name); ok {
		c.nodeDaemon(node, daemon, name, path)
		return
	}
	if slices.Contains(c.components, name) || slices.Contains(c.cpNodes, name) {
		return
	}
	if strings.HasPrefix(name, cluster.ControlPlaneNodePrefix) && len(c.cpNodes) == 0 {
		c.errorAt(path, "%s: control-plane nodes exist in a stacked topology only; set spec.cluster.stacked to true, or name a component (%s)", name, abbreviate(c.components))
		return
	}
	roles := []string{cluster.TargetEtcdLeader, cluster.TargetEtcdFollower, cluster.TargetSchedulerLeader, cluster.TargetControllerLeader}
	known := append(slices.Clone(c.components), c.cpNodes...)
	c.errorAt(path, "unknown target %q: want a component of the topology (%s), one of %s, or a daemon inside a node (NODE/%s)%s",
		name, abbreviate(known), strings.Join(roles, ", "), strings.Join(cluster.NodeDaemons, "|"), suggest(name, append(roles, known...)))
}

// nodeDaemon checks a target inside a node, NODE/DAEMON.
func (c *checker) nodeDaemon(node, daemon, name, path string) {
	if !slices.Contains(c.nodeNames, node) {
		c.errorAt(path, "unknown node %q in target %q: want NODE/DAEMON with a node of the topology (%s)%s",
			node, name, abbreviate(c.nodeNames), suggest(node, c.nodeNames))
	}
	if !cluster.KnownDaemon(daemon) {
		c.errorAt(path, "unknown daemon %q in target %q: want NODE/DAEMON with one of %s%s",
			daemon, name, strings.Join(cluster.NodeDaemons, ", "), suggest(daemon, cluster.NodeDaemons))
	}
}

// abbreviate lists at most 12 names.
func abbreviate(names []string) string {
	if len(names) > 12 {
		return strings.Join(names[:12], ", ") + fmt.Sprintf(" and %d more", len(names)-12)
	}
	return strings.Join(names, ", ")
}

// expr compiles an expression against the bindings recorded so far.
func (c *checker) expr(src, path string, asBool bool) *assertions.Compiled {
	if src == "" {
		return nil // reported as missing or empty
	}
	comp, err := assertions.Compile(src, c.bindings, asBool)
	if err == nil {
		if name := c.unknownProbe(src); name != "" {
			c.errorAt(path, "unknown probe %q: the probes started before this are %s%s", name, orNone(c.probes), suggest(name, c.probes))
			return nil
		}
		return comp
	}
	for _, id := range exprIdentifiers(src) {
		if c.broken[id] {
			return nil // reported where it is recorded
		}
		if _, bound := c.bindings[id]; !bound {
			if at, later := c.recorded[id]; later {
				c.errorAt(path, "binding %q is used before it is recorded (at line %d)", id, at.Line)
				return nil
			}
		}
	}
	// A compiler failure is not the expression's fault: ExprProblem says so.
	c.errorAt(path, "%s", ExprProblem(err, slices.Sorted(maps.Keys(c.bindings))))
	return nil
}

// Messages of the expression type checker that hint() words for a lab
// author: they name the environment's Go types.
var (
	unknownNameRE = regexp.MustCompile(`^unknown name (\w+)$`)
	noFieldRE     = regexp.MustCompile(`^type assertions\.(\w+) has no field (\w+)$`)
)

// hint words a type checker's message for a lab author (see hintMessage)
// with the bindings recorded so far.
func (c *checker) hint(msg string) string {
	return hintMessage(msg, slices.Sorted(maps.Keys(c.bindings)))
}

// hintMessage words a type checker's message for a lab author: an
// unknown name gets the nearest of the environment's names and the
// bindings, a field a type lacks gets the nearest field and the type's
// fields.
func hintMessage(msg string, bindings []string) string {
	if m := unknownNameRE.FindStringSubmatch(msg); m != nil {
		return msg + suggest(m[1], append(assertions.Names(), bindings...))
	}
	if m := noFieldRE.FindStringSubmatch(msg); m != nil {
		if fields := assertions.Fields(m[1]); fields != nil {
			return fmt.Sprintf("a %s has no field %s%s; its fields: %s", m[1], m[2], suggest(m[2], fields), strings.Join(fields, ", "))
		}
	}
	return msg
}

// ExprProblem words an error of assertions.Compile as kubelab validate
// does: the nearest name or field, and where in the expression.
func ExprProblem(err error, bindings []string) string {
	if fe := (*file.Error)(nil); errors.As(err, &fe) {
		return fmt.Sprintf("invalid expression: %s (at %d:%d of the expression)", hintMessage(fe.Message, bindings), fe.Line, fe.Column+1)
	}
	if errors.Is(err, assertions.ErrCompilerFailed) {
		return err.Error()
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return "invalid expression: " + msg
}

// unknownProbe is the first probes.NAME an expression reads that no
// probe started before it has (probes is a map: the type checker
// cannot tell).
func (c *checker) unknownProbe(src string) string {
	tree, err := parser.Parse(src)
	if err != nil {
		return ""
	}
	v := &probeVisitor{}
	ast.Walk(&tree.Node, v)
	for _, n := range v.names {
		if !slices.Contains(c.probes, n) {
			return n
		}
	}
	return ""
}

type probeVisitor struct{ names []string }

func (v *probeVisitor) Visit(n *ast.Node) {
	m, ok := (*n).(*ast.MemberNode)
	if !ok {
		return
	}
	if id, ok := m.Node.(*ast.IdentifierNode); ok && id.Value == ops.ProbesBinding {
		if s, ok := m.Property.(*ast.StringNode); ok {
			v.names = append(v.names, s.Value)
		}
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// exprIdentifiers lists the names an expression refers to.
func exprIdentifiers(src string) []string {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil
	}
	v := &identVisitor{}
	ast.Walk(&tree.Node, v)
	return v.ids
}

type identVisitor struct{ ids []string }

func (v *identVisitor) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok {
		v.ids = append(v.ids, id.Value)
	}
}

// bind records a binding with the static type of its expression (nil when
// unknown). When the expression did not compile, the binding is marked
// broken so that its uses are not reported again.
func (c *checker) bind(name string, comp *assertions.Compiled, path string) {
	switch {
	case name == "":
		return
	case !identifierRE.MatchString(name):
		c.errorAt(path, "invalid binding name %q: want an identifier (letters, digits and _, not starting with a digit)", name)
		return
	case c.reserved[name]:
		c.errorAt(path, "binding name %q clashes with a built-in name of the expression environment; pick another", name)
		return
	}
	var t reflect.Type
	if comp != nil {
		t = comp.Type
	}
	c.bindType(name, t, comp == nil, path)
}

// bindType records a binding of type t (nil when unknown). A name keeps
// the type it was first given: expressions between two bindings of the
// same name were checked against the first type, and a later one of
// another type would silently change what they mean.
func (c *checker) bindType(name string, t reflect.Type, broken bool, path string) {
	if old, bound := c.bindings[name]; bound && !c.broken[name] && !broken && old != t {
		c.errorAt(path, "binding %q already has type %s (bound at line %d); binding it again as %s would change its type: pick another name",
			name, typeName(old), c.boundAt[name].Line, typeName(t))
		return
	}
	if _, bound := c.bindings[name]; !bound {
		c.boundAt[name] = c.at(path)
	}
	c.bindings[name], c.broken[name] = t, broken
}

// typeName names a binding's type as expressions see it.
func typeName(t reflect.Type) string {
	switch {
	case t == nil:
		return "value of unknown type"
	case t.PkgPath() == reflect.TypeFor[assertions.Raft]().PkgPath():
		return t.Name() // Raft, CommandResult...
	}
	return t.String()
}
