package load

import (
	"encoding"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/ops"
)

var (
	durationType  = reflect.TypeFor[v1alpha1.Duration]()
	operationType = reflect.TypeFor[v1alpha1.Operation]()
)

// decoder fills Go values from a yaml.Node tree, strictly: it reports
// unknown and duplicate fields, missing required fields (those whose yaml
// tag has no omitempty), wrong types and invalid durations, each at the
// offending node, and carries on to find every problem.
type decoder struct {
	file  string
	probs *Problems
	// nodes maps the path of every decoded value (spec.steps[0].name) to
	// its node, so later checks can report positions.
	nodes map[string]*yaml.Node
	// unknownKey holds the paths of mappings that had an unknown key.
	unknownKey map[string]bool
	// budget is how many more values may be decoded: aliases can make a
	// small document expand enormously.
	budget int
}

// maxValues bounds the values decoded from one lab file, aliases expanded.
const maxValues = 100_000

func newDecoder(file string, probs *Problems) *decoder {
	return &decoder{file: file, probs: probs, nodes: map[string]*yaml.Node{}, unknownKey: map[string]bool{}, budget: maxValues}
}

func nodePos(n *yaml.Node) ops.Pos { return ops.Pos{Line: n.Line, Column: n.Column} }

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.probs.add(d.file, nodePos(n), path, format, args...)
}

// decode fills v from n. A null node leaves v as it is, except that a nil
// pointer to a struct is allocated (so `kill:` still names an operation).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if d.budget--; d.budget < 0 {
		if d.budget == -1 {
			d.errorf(n, path, "too many values: aliases expand the document to more than %d values", maxValues)
		}
		return
	}
	n = deref(n)
	d.nodes[path] = n
	if isNull(n) {
		if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct && v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return
	}
	switch t := v.Type(); {
	case t == durationType:
		d.duration(n, v, path)
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(n, v.Elem(), path)
	case t.Kind() == reflect.Struct:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path)
	case t.Kind() == reflect.Map:
		d.dict(n, v, path)
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		// Free-form YAML (a KubeSchedulerConfiguration): checked by whoever
		// owns its schema.
		var x any
		if err := n.Decode(&x); err != nil {
			d.errorf(n, path, "%v", err)
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		d.scalar(n, v, path)
	}
}

// decodeNonNull is decode for values that must not be null: required
// fields, list items, map values.
func (d *decoder) decodeNonNull(n *yaml.Node, v reflect.Value, path string) {
	if n = deref(n); isNull(n) {
		d.nodes[path] = n
		d.errorf(n, path, "want %s, found null", expected(v.Type()))
		return
	}
	d.decode(n, v, path)
}

type yamlField struct {
	name     string
	index    []int
	required bool
}

// yamlFields lists the keys of a struct type, from its yaml tags.
func yamlFields(t reflect.Type) []yamlField {
	var out []yamlField
	for _, f := range reflect.VisibleFields(t) {
		name := yamlName(f)
		if !f.IsExported() || f.Anonymous || name == "" || name == "-" {
			continue
		}
		out = append(out, yamlField{name: name, index: f.Index, required: !strings.Contains(f.Tag.Get("yaml"), ",omitempty")})
	}
	return out
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.wrongType(n, v.Type(), path)
		return
	}
	fs := yamlFields(v.Type())
	byName := map[string]yamlField{}
	var names []string
	for _, f := range fs {
		byName[f.name] = f
		names = append(names, f.name)
	}
	seen := map[string]*yaml.Node{}
	for k, val := range d.pairs(n, path) {
		f, ok := byName[k.Value]
		if !ok {
			d.unknown(k, v.Type(), path, names)
			continue
		}
		sub := joinPath(path, f.name)
		if d.duplicate(seen, k, sub, "field") {
			continue
		}
		fv := v.FieldByIndex(f.index)
		if !f.required || fv.Kind() == reflect.Pointer {
			d.decode(val, fv, sub)
			continue
		}
		d.decodeNonNull(val, fv, sub)
		if fv.Kind() == reflect.String && val.ShortTag() == "!!str" && val.Value == "" {
			d.errorf(val, sub, "must not be empty")
		}
	}
	for _, f := range fs {
		if f.required && seen[f.name] == nil {
			d.errorf(n, path, "missing required field %q", f.name)
		}
	}
}

// pairs yields the keys and values of mapping n, aliases followed, skipping
// (and reporting) the keys d.key refuses.
func (d *decoder) pairs(n *yaml.Node, path string) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(*yaml.Node, *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], deref(n.Content[i+1])
			if d.key(k, path) && !yield(k, val) {
				return
			}
		}
	}
}

// duplicate reports key k (at sub) when the mapping had it before, and
// otherwise notes it in seen; what names a key in messages ("field").
func (d *decoder) duplicate(seen map[string]*yaml.Node, k *yaml.Node, sub, what string) bool {
	if first := seen[k.Value]; first != nil {
		d.errorf(k, sub, "duplicate %s (first at line %d)", what, first.Line)
		return true
	}
	seen[k.Value] = k
	return false
}

// key checks a mapping key; merge keys and non-scalar keys are rejected.
func (d *decoder) key(k *yaml.Node, path string) bool {
	switch {
	case k.Kind != yaml.ScalarNode:
		d.errorf(k, path, "want a field name, found %s", describeNode(k))
	case k.ShortTag() == "!!merge":
		d.errorf(k, path, "merge keys (<<) are not supported; repeat the fields or use an alias for the whole value")
	default:
		return true
	}
	return false
}

func (d *decoder) unknown(k *yaml.Node, t reflect.Type, path string, names []string) {
	d.unknownKey[path] = true
	if t == operationType {
		kinds := ops.OperationKinds()
		if hint := suggest(k.Value, kinds); hint != "" || suggest(k.Value, names) == "" {
			d.errorf(k, path, "unknown operation %q%s", k.Value, hint)
			return
		}
	}
	if (k.Value == "timeout" || k.Value == "description") && isOpBody(t) {
		d.errorf(k, path, "unknown field %q: %s is common to all operations; write it next to the operation's key, not inside it", k.Value, k.Value)
		return
	}
	d.errorf(k, path, "unknown field %q%s", k.Value, suggest(k.Value, names))
}

// isOpBody reports whether t is the body of an operation kind (v1alpha1.TargetOp...).
func isOpBody(t reflect.Type) bool {
	for _, f := range reflect.VisibleFields(operationType) {
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem() == t {
			return true
		}
	}
	return false
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.wrongType(n, v.Type(), path)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decodeNonNull(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.wrongType(n, v.Type(), path)
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	for k, val := range d.pairs(n, path) {
		sub := joinPath(path, k.Value)
		if d.duplicate(seen, k, sub, "key") {
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		if elem.Kind() == reflect.Pointer && isNull(val) {
			d.nodes[sub] = val // a nil value: e.g. a label to remove
		} else {
			d.decodeNonNull(val, elem, sub)
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	tag := n.ShortTag()
	ok := n.Kind == yaml.ScalarNode
	switch v.Kind() {
	case reflect.String:
		ok = ok && (tag == "!!str" || tag == "!!timestamp")
		if ok {
			v.SetString(n.Value)
		}
	case reflect.Bool:
		var b bool
		ok = ok && tag == "!!bool" && n.Decode(&b) == nil
		if ok {
			v.SetBool(b)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		var i int64
		ok = ok && tag == "!!int"
		if ok {
			if err := n.Decode(&i); err != nil || v.OverflowInt(i) || i < 0 {
				d.errorf(n, path, "invalid number %s: want a non-negative integer", n.Value)
				return
			}
			v.SetInt(i)
		}
	default:
		d.errorf(n, path, "cannot decode into %s", v.Type())
		return
	}
	if !ok {
		d.wrongType(n, v.Type(), path)
	}
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int") {
		d.wrongType(n, v.Type(), path)
		return
	}
	dur, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		d.errorf(n, path, "invalid duration %q: want a Go duration like 30s or 5m", n.Value)
	case dur < 0:
		d.errorf(n, path, "invalid duration %q: must not be negative", n.Value)
	default:
		v.Set(reflect.ValueOf(v1alpha1.Duration{Duration: dur}))
	}
}

func (d *decoder) wrongType(n *yaml.Node, t reflect.Type, path string) {
	msg := fmt.Sprintf("wrong type: want %s, found %s", expected(t), describeNode(n))
	if t.Kind() == reflect.String && n.Kind == yaml.ScalarNode {
		msg += fmt.Sprintf(" (quote it: %q)", n.Value)
	}
	d.errorf(n, path, "%s", msg)
}

// expected describes the YAML a Go type is decoded from.
func expected(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration string like 30s"
	case t == operationType:
		return "an operation (a mapping)"
	case t.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return "a string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	}
	return t.String()
}

// describeNode says what a node is, for "found ..." messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	case yaml.AliasNode:
		return "an alias"
	}
	switch tag := n.ShortTag(); tag {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	default:
		return "a value tagged " + tag
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" || n.Kind == yaml.AliasNode && n.Alias == nil
}

// deref follows an alias to its anchored node.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// joinPath appends a field to a path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// parentPath strips the last field or index from a path.
func parentPath(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}

// yamlName is the key of a struct field in a lab file.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}
