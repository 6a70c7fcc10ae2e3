package ops

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
)

// Operation does one thing to or checks one thing about the cluster. Exactly
// one of its operation fields (apply, kill, wait...) is set; description and
// timeout are common to all. Its fields are v1alpha1.Operation's.
//
// String arguments may hold templates: "${before.leader}" is replaced,
// when the operation runs, by the value of a binding path (a binding, then
// fields and list indexes), checked at load time; "$${" is a literal "${".
// Fields compiled at load time (expr, until, expectOutput, expectError,
// manifest, file, patch) take none; in script.command a "${VAR}" that
// names no binding is left to the shell.
type Operation struct {
	Description string           `yaml:"description,omitempty"`
	Background  string           `yaml:"background,omitempty"`
	Timeout     cluster.Duration `yaml:"timeout,omitempty"`

	Apply     *ManifestOp `yaml:"apply,omitempty"`
	Create    *ManifestOp `yaml:"create,omitempty"`
	Patch     *PatchOp    `yaml:"patch,omitempty"`
	Delete    *DeleteOp   `yaml:"delete,omitempty"`
	Wait      *WaitOp     `yaml:"wait,omitempty"`
	Assert    *AssertOp   `yaml:"assert,omitempty"`
	Error     *ErrorOp    `yaml:"error,omitempty"`
	Cordon    *NodeOp     `yaml:"cordon,omitempty"`
	Uncordon  *NodeOp     `yaml:"uncordon,omitempty"`
	Drain     *DrainOp    `yaml:"drain,omitempty"`
	Taint     *TaintOp    `yaml:"taint,omitempty"`
	Untaint   *UntaintOp  `yaml:"untaint,omitempty"`
	Label     *LabelOp    `yaml:"label,omitempty"`
	Kill      *TargetOp   `yaml:"kill,omitempty"`
	Stop      *TargetOp   `yaml:"stop,omitempty"`
	Start     *TargetOp   `yaml:"start,omitempty"`
	Restart   *TargetOp   `yaml:"restart,omitempty"`
	Pause     *TargetOp   `yaml:"pause,omitempty"`
	Resume    *TargetOp   `yaml:"resume,omitempty"`
	Partition *TargetOp   `yaml:"partition,omitempty"`
	Heal      *TargetOp   `yaml:"heal,omitempty"`
	NodeDown  *NodeOp     `yaml:"nodeDown,omitempty"`
	NodeUp    *NodeOp     `yaml:"nodeUp,omitempty"`
	Kubectl   *KubectlOp  `yaml:"kubectl,omitempty"`
	Script    *ScriptOp   `yaml:"script,omitempty"`
	NodeExec  *NodeExecOp `yaml:"nodeExec,omitempty"`
	Sleep     *SleepOp    `yaml:"sleep,omitempty"`
	Record    *RecordOp   `yaml:"record,omitempty"`
	Snapshot  *SnapshotOp `yaml:"snapshot,omitempty"`
	Restore   *RestoreOp  `yaml:"restore,omitempty"`
	Probe     *ProbeOp    `yaml:"probe,omitempty"`

	pos       Pos
	templates map[string]*Template // the body's ${...} strings, by field
}

// Loaded records what the loader found out about the operation: where it
// starts in its file, and its body's templated strings by field path
// (nil when it has none). Only the loader calls it.
func (o *Operation) Loaded(pos Pos, templates map[string]*Template) {
	o.pos, o.templates = pos, templates
}

// Kind returns the operation's key (apply, kill, wait...), or "" when none is
// set. A loaded operation always has exactly one.
func (o *Operation) Kind() string {
	if p := o.Parts(); len(p) > 0 {
		return p[0].Kind
	}
	return ""
}

// Spec returns the operation's body for its kind: a *ManifestOp for apply
// and create, a *TargetOp for kill, stop, start, restart, pause and resume,
// a *NodeOp for cordon, uncordon, nodeDown and nodeUp, and so on; nil when
// no kind is set.
func (o *Operation) Spec() any {
	if p := o.Parts(); len(p) > 0 {
		return p[0].Spec
	}
	return nil
}

// Pos is where the operation starts in the lab file.
func (o *Operation) Pos() Pos { return o.pos }

// Compiled returns the type-checked expression of a wait, assert, error or
// record operation, compiled at load time; nil for other kinds.
func (o *Operation) Compiled() *assertions.Compiled {
	if e, ok := o.Op().(Expression); ok {
		return e.Compiled()
	}
	return nil
}

// Op is the operation of the first kind set, bound to its body; nil when
// no kind is set.
func (o *Operation) Op() Op {
	p := o.Parts()
	if len(p) == 0 {
		return nil
	}
	return p[0].Op()
}

// OwnDuration is how long the operation takes by design: sleep.duration,
// assert.within or error.for.
func (o *Operation) OwnDuration() time.Duration {
	if t, ok := o.Op().(Timed); ok {
		return t.OwnDuration()
	}
	return 0
}

// TimeLimit is how long the operation may run: its own timeout, or its
// kind's default plus the duration it is asked to spend (sleep, assert
// within, error for).
func (o *Operation) TimeLimit() time.Duration {
	if d := o.Timeout.Duration; d > 0 {
		return d
	}
	if k := o.Op(); k != nil {
		return k.DefaultTimeout() + o.OwnDuration()
	}
	return DefaultTimeout(o.Kind())
}

// Summary describes the operation in a few words for progress and
// reports: its description, or its kind's summary.
func (o *Operation) Summary() string {
	if o.Description != "" {
		return o.Description
	}
	if k := o.Op(); k != nil {
		return k.Summary()
	}
	return o.Kind()
}

// Prepare is the operation's kind with its templates rendered from the
// bindings of now, ready to Exec; the operation itself stays as loaded.
func (o *Operation) Prepare(ctx context.Context, view assertions.View, bindings map[string]any) (Op, error) {
	op := o.Op()
	if op == nil {
		return nil, errors.New("operation has no kind")
	}
	if len(o.templates) > 0 {
		body, err := Rendered(ctx, o.Spec(), o.templates, view, bindings)
		if err != nil {
			return nil, err
		}
		k, _ := Lookup(o.Kind())
		op = k.Bind(body)
	}
	return op, nil
}

// Part is one operation field that is set: its kind and its body.
type Part struct {
	Kind string
	Spec any
}

// Op binds the part's body to its kind.
func (p Part) Op() Op {
	k, ok := Lookup(p.Kind)
	if !ok {
		panic("ops: operation kind " + p.Kind + " is not registered")
	}
	return k.Bind(p.Spec)
}

// Parts lists the operation fields that are set, in schema order: one for
// a loaded operation, none or several for one the loader refuses.
func (o *Operation) Parts() []Part {
	var out []Part
	v := reflect.ValueOf(o).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if fv := v.FieldByIndex(f.Index); f.IsExported() && f.Type.Kind() == reflect.Pointer && !fv.IsNil() {
			out = append(out, Part{Kind: yamlName(f), Spec: fv.Interface()})
		}
	}
	return out
}

// OperationKinds lists every operation key, in schema order.
func OperationKinds() []string {
	var out []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Operation]()) {
		if f.IsExported() && f.Type.Kind() == reflect.Pointer {
			out = append(out, yamlName(f))
		}
	}
	return out
}

// yamlName is the key of a struct field in a lab file.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// New is the operation of the given kind (its key in a lab file, e.g.
// kill) with body spec (e.g. a *TargetOp): how code, not a file, makes
// an operation of a kind it names.
func New(kind string, spec any) (Operation, error) {
	var o Operation
	v := reflect.ValueOf(&o).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.IsExported() || f.Type.Kind() != reflect.Pointer || yamlName(f) != kind {
			continue
		}
		sv := reflect.ValueOf(spec)
		if sv.Type() != f.Type {
			return o, fmt.Errorf("operation %s takes a %s, not a %T", kind, f.Type, spec)
		}
		v.FieldByIndex(f.Index).Set(sv)
		return o, nil
	}
	return o, fmt.Errorf("unknown operation %q", kind)
}

// Aimed is the operation of a kind whose body names one thing to act on
// (a fault's target, a node operation's node), aimed at name: what a
// drill step or a page's fault button makes from a kind and a name
// without knowing the kind's body.
func Aimed(kind, name string) (Operation, error) {
	k, ok := Lookup(kind)
	if !ok {
		return Operation{}, fmt.Errorf("unknown operation %q", kind)
	}
	body := reflect.New(k.Type.Elem())
	for _, field := range []string{"Target", "Node"} {
		if f := body.Elem().FieldByName(field); f.IsValid() && f.Kind() == reflect.String {
			f.SetString(name)
			return New(kind, body.Interface())
		}
	}
	return Operation{}, fmt.Errorf("operation %s does not aim at a component or node", kind)
}
