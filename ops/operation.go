package ops

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"time"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

// Op is one operation kind bound to its body in a lab file, e.g.
// kill with its TargetOp.
type Op interface {
	// Exec runs the operation; ctx carries its deadline. The output is
	// shown in reports (objects applied, a command's output...).
	Exec(ctx context.Context, env Env) (output string, err error)
	// Summary describes the operation in a few words for progress and
	// reports, e.g. "kill etcd-leader".
	Summary() string
	// DefaultTimeout bounds the operation when it sets no timeout, not
	// counting the time it takes by design (see Timed).
	DefaultTimeout() time.Duration
	// Validate checks the body at load time, reporting problems through c,
	// and prepares it to run (parsed manifests, compiled expressions...).
	Validate(c Checker)
}

// Timed is an Op that takes time by design (sleep.duration,
// assert.within, error.for): that duration is added to its default
// timeout, and an explicit timeout must leave room for it.
type Timed interface {
	OwnDuration() time.Duration
}

// Expression is an Op built on an expression (wait, assert, error,
// record): Compiled is its type-checked form, nil before Validate or when it
// did not compile.
type Expression interface {
	Compiled() *assertions.Compiled
}

// Binder is an Op that binds a name for later expressions (record,
// kubectl and script with bind): the loader learns every name before it
// checks the expressions, to tell "used before it is recorded" from
// "unknown".
type Binder interface {
	// Binding is the bound name ("" = none) and the field that sets it.
	Binding() (name, field string)
}

// Env is what an operation runs against: the lab's cluster, its clients,
// the watch-fed view of it and the recorded bindings.
type Env interface {
	// Cluster is the lab's cluster: resolve targets, act on components.
	Cluster() *cluster.Cluster
	// Clients returns the API clients, made on first use.
	Clients() (*Clients, error)
	// View is the watch-fed view expressions are evaluated against.
	View() View
	// Bindings are the values recorded so far, by name.
	Bindings() map[string]any
	// Bind records a value for later expressions.
	Bind(name string, v any)
	// Binary is the kubelab executable (kubectl operations run it).
	Binary() string
	// Fault notes in the timeline a fault or repair the backend applied,
	// at the time it was asked for (one the backend refused is not noted).
	Fault(a cluster.Action, subject string, at time.Time)
	// Go runs f in the background until the lab (or session) ends; ctx
	// ends then, and the end waits for f to return.
	Go(f func(ctx context.Context))
	// Probe makes the record of a background probe readable as
	// probes.NAME: read is called at each evaluation.
	Probe(name string, read func() assertions.Probe)
}

// View is the cluster as expressions see it, and a signal when it changes.
type View interface {
	assertions.View
	// Changed is signalled when a watched object changes.
	Changed() <-chan struct{}
}

// Checker is what Validate reports to. It is scoped to the operation's
// body: field names are relative to it ("target", "expr"; "" is the body
// itself), and every problem is reported with its file:line:column.
type Checker interface {
	// Errorf reports a problem at a field.
	Errorf(field, format string, args ...any)
	// Suggest returns ` (did you mean "x"?)` when name is close to one of
	// the candidates, else "".
	Suggest(name string, candidates []string) string
	// Node reports a name that is not a node of the topology.
	Node(name, field string)
	// Target reports a name that is not a component of the topology or a
	// role (etcd-leader...) it can resolve.
	Target(name, field string)
	// Regexp compiles a pattern ("" = none), reporting a bad one.
	Regexp(src, field string) *regexp.Regexp
	// Expr type-checks an expression against the bindings recorded so far;
	// nil when src is empty or it does not compile (reported).
	Expr(src, field string, asBool bool) *assertions.Compiled
	// Bind records a binding for the expressions after it.
	Bind(name string, c *assertions.Compiled, field string)
	// BindType records a binding of a known type (e.g. a command's
	// result) for the expressions after it.
	BindType(name string, t reflect.Type, field string)
	// Bound reports a name that no operation before this one binds to a
	// value of type t (what says what such a value is: "snapshot").
	Bound(name string, t reflect.Type, field, what string)
	// Objects parses the objects of exactly one of file (relative to the
	// lab file) and manifest (inline), reported at field.
	Objects(file, manifest, field string) []Object
	// Scalar is the text of a field as written, when it is a non-null
	// scalar.
	Scalar(field string) (string, bool)
	// YAML parses a document given in a string field; nil (reported as an
	// invalid what) when it does not parse.
	YAML(src, field, what string) *yaml.Node
	// Describe names the kind of a YAML node ("a mapping", "a string"...).
	Describe(n *yaml.Node) string
	// Timeout is the operation's own timeout as written (0 when unset).
	Timeout() time.Duration
}

// Pos is a position in a lab file: 1-based line and column.
type Pos struct {
	// Line is the 1-based line.
	Line int `json:"line"`
	// Column is the 1-based column, in bytes.
	Column int `json:"column"`
}

// String renders the position as line:column.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Sleep waits for d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
