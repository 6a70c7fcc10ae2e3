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
// timeout are common to all.
//
// String arguments may hold templates: "${before.leader}" is replaced,
// when the operation runs, by the value of a binding path (a binding, then
// fields and list indexes), checked at load time; "$${" is a literal "${".
// Fields compiled at load time (expr, until, expectOutput, expectError,
// manifest, file, patch) take none; in script.command a "${VAR}" that
// names no binding is left to the shell.
type Operation struct {
	// Description explains the operation.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Background runs the operation in the background under this name:
	// the step goes on at once, the operation runs (within its timeout)
	// while later steps do, and expressions read its record as
	// background.NAME (.done, .passed, .error, .output, .seconds), e.g.
	// a drain held by a PodDisruptionBudget until a later step makes room.
	// Not for operations that bind a name, record or probe.
	Background string `json:"background,omitempty" yaml:"background,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// Timeout bounds the operation. Default by kind: 30s for API writes
	// (apply, create, patch, delete, label, taint, untaint, cordon,
	// uncordon), record and sleep; 60s for checks (wait, assert, error),
	// faults (kill, stop, start, restart, pause, resume, nodeDown, nodeUp),
	// commands (kubectl, script) and snapshot; 2m for drain; 3m for
	// restore. The operation's own
	// duration (sleep.duration, assert.within, error.for) is added to the
	// default.
	Timeout cluster.Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`

	// Apply creates or updates objects (kubectl apply).
	Apply *ManifestOp `json:"apply,omitempty" yaml:"apply,omitempty"`
	// Create creates objects and fails if they exist.
	Create *ManifestOp `json:"create,omitempty" yaml:"create,omitempty"`
	// Patch patches one object.
	Patch *PatchOp `json:"patch,omitempty" yaml:"patch,omitempty"`
	// Delete deletes objects.
	Delete *DeleteOp `json:"delete,omitempty" yaml:"delete,omitempty"`
	// Wait waits until an expression holds.
	Wait *WaitOp `json:"wait,omitempty" yaml:"wait,omitempty"`
	// Assert checks that an expression holds now, or becomes true within a
	// duration.
	Assert *AssertOp `json:"assert,omitempty" yaml:"assert,omitempty"`
	// Error checks that an expression does NOT hold now, or for a whole
	// duration.
	Error *ErrorOp `json:"error,omitempty" yaml:"error,omitempty"`
	// Cordon marks a node unschedulable.
	Cordon *NodeOp `json:"cordon,omitempty" yaml:"cordon,omitempty"`
	// Uncordon marks a node schedulable.
	Uncordon *NodeOp `json:"uncordon,omitempty" yaml:"uncordon,omitempty"`
	// Drain cordons a node and evicts its pods.
	Drain *DrainOp `json:"drain,omitempty" yaml:"drain,omitempty"`
	// Taint adds or replaces a node taint.
	Taint *TaintOp `json:"taint,omitempty" yaml:"taint,omitempty"`
	// Untaint removes a node taint.
	Untaint *UntaintOp `json:"untaint,omitempty" yaml:"untaint,omitempty"`
	// Label sets or removes labels of an object.
	Label *LabelOp `json:"label,omitempty" yaml:"label,omitempty"`
	// Kill sends SIGKILL to a component, or to a daemon inside a node
	// (worker-2/kubelet), which then stays down until start.
	Kill *TargetOp `json:"kill,omitempty" yaml:"kill,omitempty"`
	// Stop stops a component or a daemon inside a node gracefully
	// (SIGTERM).
	Stop *TargetOp `json:"stop,omitempty" yaml:"stop,omitempty"`
	// Start starts a stopped component or daemon inside a node.
	Start *TargetOp `json:"start,omitempty" yaml:"start,omitempty"`
	// Restart stops, then starts a component or daemon inside a node.
	Restart *TargetOp `json:"restart,omitempty" yaml:"restart,omitempty"`
	// Pause freezes a component or daemon inside a node (SIGSTOP).
	Pause *TargetOp `json:"pause,omitempty" yaml:"pause,omitempty"`
	// Resume unfreezes a paused component or daemon inside a node
	// (SIGCONT).
	Resume *TargetOp `json:"resume,omitempty" yaml:"resume,omitempty"`
	// Partition cuts a component or node off the cluster network (docker
	// backend only).
	Partition *TargetOp `json:"partition,omitempty" yaml:"partition,omitempty"`
	// Heal reconnects a partitioned component (docker backend only).
	Heal *TargetOp `json:"heal,omitempty" yaml:"heal,omitempty"`
	// NodeDown takes a worker node down: its kubelet stops heartbeating.
	NodeDown *NodeOp `json:"nodeDown,omitempty" yaml:"nodeDown,omitempty"`
	// NodeUp brings a worker node back.
	NodeUp *NodeOp `json:"nodeUp,omitempty" yaml:"nodeUp,omitempty"`
	// Kubectl runs kubectl against the lab cluster.
	Kubectl *KubectlOp `json:"kubectl,omitempty" yaml:"kubectl,omitempty"`
	// Script runs a shell command with KUBECONFIG set.
	Script *ScriptOp `json:"script,omitempty" yaml:"script,omitempty"`
	// NodeExec runs a command inside a real node (docker backend).
	NodeExec *NodeExecOp `json:"nodeExec,omitempty" yaml:"nodeExec,omitempty"`
	// Sleep waits for a fixed duration.
	Sleep *SleepOp `json:"sleep,omitempty" yaml:"sleep,omitempty"`
	// Record evaluates an expression and binds its value to a name that
	// later expressions can use.
	Record *RecordOp `json:"record,omitempty" yaml:"record,omitempty"`
	// Snapshot saves an etcd snapshot (etcdctl snapshot save) under a name.
	Snapshot *SnapshotOp `json:"snapshot,omitempty" yaml:"snapshot,omitempty"`
	// Restore restores every etcd member from a snapshot taken earlier
	// (etcdutl snapshot restore), stopping and starting the control plane
	// around it.
	Restore *RestoreOp `json:"restore,omitempty" yaml:"restore,omitempty"`
	// Probe starts a background probe that runs until the lab ends; later
	// expressions read its record as probes.NAME.
	Probe *ProbeOp `json:"probe,omitempty" yaml:"probe,omitempty"`

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
