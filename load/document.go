package load

import (
	"iter"
	"path/filepath"
	"reflect"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// Document is a YAML file of another kind than Lab loaded the way a lab
// file is: decoded strictly into Go values by DecodeDocument, then
// checked part by part (its topology, its operations, and whatever the
// caller checks itself with Errorf), every problem collected with its
// file:line:column until Err returns them all. Package grade loads
// exercise files with it.
type Document struct {
	c    *checker
	kind string
}

// DecodeDocument parses data, the content of the file at path, as a
// single YAML mapping of the given kind (named in messages, e.g.
// Exercise), and decodes it strictly into v, a pointer to a struct whose
// yaml tags give its fields: unknown and duplicate fields, missing
// required ones (a yaml tag without omitempty), wrong types and invalid
// durations are problems of the Document.
//
// When nothing more can be checked (the file is empty, is not YAML or not
// a mapping, or aliases expand it beyond bounds), DecodeDocument returns
// a nil Document and the *Problems error.
func DecodeDocument(path string, data []byte, kind string, v any) (*Document, error) {
	probs := &Problems{}
	root := parse(path, data, kind, probs)
	if root == nil {
		return nil, probs.orNil()
	}
	d := newDecoder(path, probs)
	d.decode(root, reflect.ValueOf(v).Elem(), "")
	if d.budget < 0 { // the document is pathological: stop there
		return nil, probs.orNil()
	}
	return &Document{c: newChecker(d, filepath.Dir(path), data), kind: kind}, nil
}

// Errorf reports a problem at the node of a path of the document (e.g.
// spec.checks[1].name), or of its closest decoded ancestor.
func (d *Document) Errorf(path, format string, args ...any) {
	d.c.errorAt(path, format, args...)
}

// Suggest returns ` (did you mean "x"?)` when name is close to one of the
// candidates, else "": the hint every loader message gives.
func (d *Document) Suggest(name string, candidates []string) string {
	return suggest(name, candidates)
}

// Pos is where the node of a path (or its closest decoded ancestor)
// starts.
func (d *Document) Pos(path string) ops.Pos { return d.c.at(path) }

// CheckHeader checks the values of apiVersion, kind (the kind given to
// DecodeDocument) and metadata.name, as a lab's.
func (d *Document) CheckHeader(apiVersion, kind, name string) {
	d.c.header(apiVersion, kind, d.kind, name)
}

// CheckNamed checks a list of named items at path (spec.checks) as a
// lab's steps: at least one item when the list is written, names unique
// within it (noun names an item in messages: "check") and every try list
// non-empty. It returns where each item starts.
func CheckNamed[T any](d *Document, path, noun string, items []T, item func(*T) (name string, try []ops.Operation)) []ops.Pos {
	return checkNamed(d.c, path, noun, items, item)
}

// CheckTopology fills the defaults of the topology at spec.cluster and
// checks it as a lab's. It comes before CheckOperations, whose node and
// target names are checked against it.
func (d *Document) CheckTopology(t *cluster.Topology) { d.c.cluster(t) }

// CheckOperations checks operations, given with their paths in the order
// they run, as a lab's: their bodies, targets, manifests, templates and
// expressions (against the bindings recorded before each), and fills
// their default timeouts. A name bound later than it is used is reported
// as such.
func (d *Document) CheckOperations(ops iter.Seq2[string, *ops.Operation]) { d.c.operations(ops) }

// Bindings are the names the checked operations record, with the static
// type of each (nil when unknown); Session.Declare makes them known to a
// session.
func (d *Document) Bindings() map[string]reflect.Type { return d.c.bindings }

// Source is the document's file and the bindings of its checked
// operations (Bindings), for the checked value that embeds it.
func (d *Document) Source() Source { return Source{file: d.c.file, bindings: d.c.bindings} }

// Err returns every problem found, sorted by position, as a *Problems; nil
// when there is none.
func (d *Document) Err() error { return d.c.probs.orNil() }

// operations checks operations given in the order they run: it first
// notes where every name is bound, so that a use before its binder says
// so, then checks each.
func (c *checker) operations(all iter.Seq2[string, *ops.Operation]) {
	for path, op := range all {
		b, ok := op.Op().(ops.Binder)
		if !ok {
			continue
		}
		if name, field := b.Binding(); identifierRE.MatchString(name) && !c.reserved[name] {
			if _, dup := c.recorded[name]; !dup {
				c.recorded[name] = c.at(joinPath(path+"."+op.Kind(), field))
			}
		}
	}
	for path, op := range all {
		c.operation(op, path)
	}
}
