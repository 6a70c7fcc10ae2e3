package engine

import (
	"reflect"
	"strings"
	"time"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine/ops"
)

// The only apiVersion and kind of a lab file.
const (
	APIVersion = "kubelab.dev/v1alpha1"
	KindLab    = "Lab"
)

// DefaultLabTimeout bounds a whole lab when spec.timeout is not set.
const DefaultLabTimeout = 10 * time.Minute

// Lab is a kubelab lab file: a cluster topology and the steps that break it
// and check how it recovers.
type Lab struct {
	// APIVersion must be kubelab.dev/v1alpha1.
	APIVersion string `json:"apiVersion" yaml:"apiVersion" jsonschema:"enum=kubelab.dev/v1alpha1"`
	// Kind must be Lab.
	Kind string `json:"kind" yaml:"kind" jsonschema:"enum=Lab"`
	// Metadata names and describes the lab.
	Metadata Metadata `json:"metadata" yaml:"metadata"`
	// Spec is the cluster and what happens to it.
	Spec Spec `json:"spec" yaml:"spec"`

	file     string
	bindings map[string]reflect.Type
}

// File is the path the lab was loaded from.
func (l *Lab) File() string { return l.file }

// Bindings returns the names bound by record operations anywhere in the lab,
// with the static type of their values (nil when unknown). Expressions in
// catch, finally and cleanup may refer to a binding whose record did not run
// because an earlier step failed; give it the zero value of its type.
func (l *Lab) Bindings() map[string]reflect.Type { return l.bindings }

// NeedsNodeInternals reports whether the lab looks or reaches inside nodes
// (iptables(), cri(), nodeExec, a fault on worker-2/kubelet), which needs a
// backend with real nodes.
func (l *Lab) NeedsNodeInternals() bool {
	_, ok := l.Needs()[cluster.CapNodeInternals]
	return ok
}

// NeedsEtcdSnapshots reports whether the lab takes or restores etcd
// snapshots, which needs a backend that is a cluster.EtcdRestorer.
func (l *Lab) NeedsEtcdSnapshots() bool {
	for _, op := range labOperations(l) {
		if op.Snapshot != nil || op.Restore != nil {
			return true
		}
	}
	return false
}

// Metadata names and describes a lab.
type Metadata struct {
	// Name identifies the lab: a DNS label such as etcd-leader-failover.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$,maxLength=63"`
	// Title is a one-line human title.
	Title string `json:"title" yaml:"title" jsonschema:"minLength=1"`
	// Description explains the lab, in Markdown.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Tags are free-form keywords for filtering.
	Tags []string `json:"tags,omitempty" yaml:"tags,omitempty"`
	// Topics are the seed topics the lab teaches, e.g. etcd-raft.
	Topics []string `json:"topics,omitempty" yaml:"topics,omitempty"`
	// Duration is the estimated time the lab takes, shown by `kubelab list`.
	Duration cluster.Duration `json:"duration,omitzero" yaml:"duration,omitempty"`
}

// Spec is the cluster of a lab and the operations run against it.
//
// Timeouts cascade: spec.timeout bounds the whole lab (steps, catch, finally
// and cleanup); a step's timeout bounds the step; an operation's timeout
// (its own, or the default of its kind) bounds the operation. An operation
// therefore ends at the earliest of the three deadlines.
type Spec struct {
	// Timeout bounds the whole lab. Default 10m.
	Timeout cluster.Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Cluster is the topology the lab runs on. Omitted counts default to 1.
	Cluster cluster.Topology `json:"cluster,omitzero" yaml:"cluster,omitempty"`
	// Steps run in order; the lab fails at the first failing step unless
	// that step sets continueOnError.
	Steps []Step `json:"steps" yaml:"steps" jsonschema:"minItems=1"`
	// Catch runs when a step failed.
	Catch []Operation `json:"catch,omitempty" yaml:"catch,omitempty"`
	// Finally always runs after the steps (and catch).
	Finally []Operation `json:"finally,omitempty" yaml:"finally,omitempty"`
	// Cleanup runs last, before the cluster is torn down.
	Cleanup []Operation `json:"cleanup,omitempty" yaml:"cleanup,omitempty"`
}

// Step is a named sequence of operations.
type Step struct {
	// Name is unique within the lab.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Description explains the step, in Markdown.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Timeout caps the step, including its operations; none by default
	// (the lab's timeout still applies).
	Timeout cluster.Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// ContinueOnError runs the next steps even when this one fails (the lab
	// still fails).
	ContinueOnError bool `json:"continueOnError,omitempty" yaml:"continueOnError,omitempty"`
	// Try lists the operations, run in order until one fails.
	Try []Operation `json:"try" yaml:"try" jsonschema:"minItems=1"`

	pos Pos
}

// Pos is where the step starts in the lab file.
func (s *Step) Pos() Pos { return s.pos }

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
	templates map[string]*template // the body's ${...} strings, by field
}

// Kind returns the operation's key (apply, kill, wait...), or "" when none is
// set. A loaded operation always has exactly one.
func (o *Operation) Kind() string {
	if p := o.parts(); len(p) > 0 {
		return p[0].kind
	}
	return ""
}

// Spec returns the operation's body for its kind: a *ManifestOp for apply
// and create, a *TargetOp for kill, stop, start, restart, pause and resume,
// a *NodeOp for cordon, uncordon, nodeDown and nodeUp, and so on; nil when
// no kind is set.
func (o *Operation) Spec() any {
	if p := o.parts(); len(p) > 0 {
		return p[0].spec
	}
	return nil
}

// Pos is where the operation starts in the lab file.
func (o *Operation) Pos() Pos { return o.pos }

// Compiled returns the type-checked expression of a wait, assert, error or
// record operation, compiled at load time; nil for other kinds.
func (o *Operation) Compiled() *assertions.Compiled {
	if e, ok := o.op().(ops.Expression); ok {
		return e.Compiled()
	}
	return nil
}

// op is the operation of the first kind set, bound to its body; nil when no
// kind is set.
func (o *Operation) op() ops.Operation {
	p := o.parts()
	if len(p) == 0 {
		return nil
	}
	return p[0].op()
}

// ownDuration is how long the operation takes by design: sleep.duration,
// assert.within or error.for.
func (o *Operation) ownDuration() time.Duration {
	if t, ok := o.op().(ops.Timed); ok {
		return t.OwnDuration()
	}
	return 0
}

type opPart struct {
	kind string
	spec any
}

// op binds the part's body to its kind.
func (p opPart) op() ops.Operation {
	k, ok := ops.Lookup(p.kind)
	if !ok {
		panic("engine: operation kind " + p.kind + " is not registered in package ops")
	}
	return k.Bind(p.spec)
}

// parts lists the operation fields that are set, in schema order.
func (o *Operation) parts() []opPart {
	var out []opPart
	v := reflect.ValueOf(o).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if fv := v.FieldByIndex(f.Index); f.IsExported() && f.Type.Kind() == reflect.Pointer && !fv.IsNil() {
			out = append(out, opPart{kind: yamlName(f), spec: fv.Interface()})
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

// DefaultTimeout is the timeout of an operation of the given kind that does
// not set one, not counting its own duration (sleep.duration, assert.within,
// error.for): each kind states its own in package ops.
func DefaultTimeout(kind string) time.Duration { return ops.DefaultTimeout(kind) }

// The bodies of the operation kinds, defined with their kinds in package ops.
type (
	Object     = ops.Object
	PatchOp    = ops.PatchOp
	DeleteOp   = ops.DeleteOp
	WaitOp     = ops.WaitOp
	AssertOp   = ops.AssertOp
	ErrorOp    = ops.ErrorOp
	NodeOp     = ops.NodeOp
	DrainOp    = ops.DrainOp
	TaintOp    = ops.TaintOp
	UntaintOp  = ops.UntaintOp
	LabelOp    = ops.LabelOp
	TargetOp   = ops.TargetOp
	KubectlOp  = ops.KubectlOp
	ScriptOp   = ops.ScriptOp
	SleepOp    = ops.SleepOp
	NodeExecOp = ops.NodeExecOp
	RecordOp   = ops.RecordOp
	ProbeOp    = ops.ProbeOp
	SnapshotOp = ops.SnapshotOp
	RestoreOp  = ops.RestoreOp
)
