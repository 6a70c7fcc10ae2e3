package v1alpha1

// The operations a lab's steps (and an exercise's setup, solution and
// checks) list. These types are what a file may say; package ops holds
// the kinds that run them, and package load converts one to the other
// once a file is decoded.

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
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`

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
}

// ManifestOp applies or creates objects, given by exactly one of file and
// manifest.
type ManifestOp struct {
	// File is a YAML file of objects, relative to the lab file.
	File string `json:"file,omitempty" yaml:"file,omitempty"`
	// Manifest is inline YAML; several documents are allowed.
	Manifest string `json:"manifest,omitempty" yaml:"manifest,omitempty"`
	// Namespace for namespaced objects that do not set one. Default
	// "default".
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// ExpectError is a regular expression (RE2) the apiserver's refusal
	// message must match: the operation passes only if the apiserver
	// refuses it (admission, validation, quota, a conflict...) saying so,
	// e.g. "exceeded quota" or "denied request".
	ExpectError string `json:"expectError,omitempty" yaml:"expectError,omitempty"`
}

// PatchOp patches one object.
type PatchOp struct {
	// Kind of the object, e.g. Deployment.
	Kind string `json:"kind" yaml:"kind"`
	// Name of the object.
	Name string `json:"name" yaml:"name"`
	// Namespace of the object. Default "default" for namespaced kinds.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// Type of patch: merge, strategic (default) or json.
	Type string `json:"type,omitempty" yaml:"type,omitempty" jsonschema:"enum=merge,enum=strategic,enum=json,default=strategic"`
	// Patch is the patch document, in YAML or JSON: a mapping for merge and
	// strategic patches, a list of operations for json patches.
	Patch string `json:"patch" yaml:"patch"`
	// ExpectError is a regular expression (RE2) the apiserver's refusal
	// message must match: the operation passes only if the apiserver
	// refuses it (admission, validation, quota, a conflict...) saying so,
	// e.g. "exceeded quota" or "denied request".
	ExpectError string `json:"expectError,omitempty" yaml:"expectError,omitempty"`
}

// DeleteOp deletes objects: kind and name, kind and selector, or the objects
// of a file or manifest.
type DeleteOp struct {
	// Kind of the objects, e.g. Pod.
	Kind string `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Name of the object.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Namespace of the objects. Default "default" for namespaced kinds.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// Selector is a label selector, e.g. app=web.
	Selector string `json:"selector,omitempty" yaml:"selector,omitempty"`
	// File is a YAML file of objects to delete, relative to the lab file.
	File string `json:"file,omitempty" yaml:"file,omitempty"`
	// Manifest is inline YAML of objects to delete.
	Manifest string `json:"manifest,omitempty" yaml:"manifest,omitempty"`
	// Wait waits until the objects are gone.
	Wait bool `json:"wait,omitempty" yaml:"wait,omitempty"`
	// ExpectError is a regular expression (RE2) the apiserver's refusal
	// message must match: the operation passes only if the apiserver
	// refuses it (admission, validation, quota, not found...) saying so,
	// e.g. "exceeded quota" or "denied request".
	ExpectError string `json:"expectError,omitempty" yaml:"expectError,omitempty"`
}

// WaitOp waits until an expression holds; the operation's timeout bounds
// the wait.
type WaitOp struct {
	// Expr is a boolean expr-lang expression over the cluster and the
	// recorded bindings.
	Expr string `json:"expr" yaml:"expr" jsonschema:"minLength=1"`
	// Timeout bounds the wait: the same as the operation's timeout, which
	// it sets (write one or the other). Default 60s.
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
}

// AssertOp checks that an expression holds.
type AssertOp struct {
	// Expr is a boolean expression.
	Expr string `json:"expr" yaml:"expr" jsonschema:"minLength=1"`
	// Within, when set, lets the expression become true within this
	// duration; otherwise it must hold now: as of the watch-fed view, which
	// is given up to 1s to catch up with the lab's own latest writes.
	Within Duration `json:"within,omitzero" yaml:"within,omitempty"`
}

// ErrorOp checks that an expression does not hold.
type ErrorOp struct {
	// Expr is a boolean expression that must be false.
	Expr string `json:"expr" yaml:"expr" jsonschema:"minLength=1"`
	// For, when set, requires the expression to stay false for this whole
	// duration; otherwise it must be false now (the view is given up to 1s
	// to catch up with the lab's own latest writes).
	For Duration `json:"for,omitzero" yaml:"for,omitempty"`
}

// NodeOp names a worker node of the topology.
type NodeOp struct {
	// Node is the node's name, e.g. worker-1.
	Node string `json:"node" yaml:"node" jsonschema:"minLength=1"`
}

// DrainOp drains a node.
type DrainOp struct {
	// Node is the node's name.
	Node string `json:"node" yaml:"node" jsonschema:"minLength=1"`
	// GracePeriod overrides the pods' termination grace period.
	GracePeriod Duration `json:"gracePeriod,omitzero" yaml:"gracePeriod,omitempty"`
}

// TaintOp adds or replaces a taint on a node.
type TaintOp struct {
	// Node is the node's name.
	Node string `json:"node" yaml:"node" jsonschema:"minLength=1"`
	// Key of the taint.
	Key string `json:"key" yaml:"key" jsonschema:"minLength=1"`
	// Value of the taint, optional.
	Value string `json:"value,omitempty" yaml:"value,omitempty"`
	// Effect: NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect" yaml:"effect" jsonschema:"enum=NoSchedule,enum=PreferNoSchedule,enum=NoExecute"`
}

// UntaintOp removes a taint from a node.
type UntaintOp struct {
	// Node is the node's name.
	Node string `json:"node" yaml:"node" jsonschema:"minLength=1"`
	// Key of the taint.
	Key string `json:"key" yaml:"key" jsonschema:"minLength=1"`
	// Effect, when set, removes only the taint with this effect.
	Effect string `json:"effect,omitempty" yaml:"effect,omitempty" jsonschema:"enum=NoSchedule,enum=PreferNoSchedule,enum=NoExecute"`
}

// LabelOp sets or removes labels of an object.
type LabelOp struct {
	// Kind of the object. Default Node.
	Kind string `json:"kind,omitempty" yaml:"kind,omitempty" jsonschema:"default=Node"`
	// Name of the object.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Namespace of the object, for namespaced kinds.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// Labels to set; a null value (key: null, or key: ~) removes the label.
	// In Go, a nil value means remove.
	Labels map[string]*string `json:"labels" yaml:"labels"`
}

// TargetOp names a component to kill, stop, start, restart, pause or
// resume (or to partition or heal).
type TargetOp struct {
	// Target is a component (etcd-1, kube-apiserver-2, kube-scheduler-1,
	// kube-controller-manager-2, load-balancer, worker-3); a role resolved
	// when the operation runs: etcd-leader, etcd-follower, scheduler-leader,
	// controller-manager-leader; a daemon inside a node, NODE/DAEMON with
	// DAEMON one of containerd, kubelet, kube-proxy (worker-2/kubelet: that
	// process alone, while the node and its pods keep running; kill and stop
	// hold it down until start, restart has its supervisor start it again;
	// docker backend, not for partition and heal); or a template such as
	// "${before.leader}" (a name recorded earlier).
	Target string `json:"target" yaml:"target" jsonschema:"minLength=1"`
}

// KubectlOp runs kubectl.
type KubectlOp struct {
	// Args are kubectl's arguments, without "kubectl".
	Args []string `json:"args" yaml:"args" jsonschema:"minItems=1"`
	// ExpectError makes the operation succeed only if kubectl fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// Namespace passed as --namespace.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// ExpectOutput is a regular expression the combined output must match
	// (RE2 syntax), e.g. "410|Gone" or "^no$".
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`
	// Stdin is given to kubectl on its standard input, e.g. a manifest for
	// `apply -f -`.
	Stdin string `json:"stdin,omitempty" yaml:"stdin,omitempty"`
	// Bind names the result for later expressions: NAME.stdout,
	// NAME.stderr, NAME.exitCode and NAME.json (stdout parsed, with -o
	// json). It is bound even when the operation fails.
	Bind string `json:"bind,omitempty" yaml:"bind,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// Retry runs kubectl again, backing off, until an attempt passes.
	Retry *Retry `json:"retry,omitempty" yaml:"retry,omitempty"`
}

// ScriptOp runs a shell command.
type ScriptOp struct {
	// Command is run by sh -c, with KUBECONFIG, KUBECTL, KUBELAB_CLUSTER
	// and KUBELAB_BACKEND set, and ETCDCTL (etcdctl with the cluster's
	// etcd client certificate) where this machine reaches etcd: a script
	// that uses $ETCDCTL needs such a backend.
	Command string `json:"command" yaml:"command" jsonschema:"minLength=1"`
	// ExpectError makes the operation succeed only if the command fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// ExpectOutput is a regular expression the combined output must match.
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`
	// Bind names the result for later expressions: NAME.stdout,
	// NAME.stderr, NAME.exitCode and NAME.json (stdout parsed, when it is
	// JSON). It is bound even when the operation fails.
	Bind string `json:"bind,omitempty" yaml:"bind,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// Retry runs the command again, backing off, until an attempt passes.
	Retry *Retry `json:"retry,omitempty" yaml:"retry,omitempty"`
	// ReadsOnly says the command only reads the cluster (kubectl get,
	// curl...). kubelab cannot tell what a shell command does: an
	// exercise check with a script that does not say so is destructive
	// (kubelab check runs it only with --final).
	ReadsOnly bool `json:"readOnly,omitempty" yaml:"readOnly,omitempty"`
}

// Retry makes a command run again, backing off (100ms doubling to 2s),
// until an attempt passes or the timeout ends: for what the apiservers
// learn through informers (RBAC bindings, admission policies) or
// controllers do in their own time. An attempt passes when the command's
// own checks pass (expectError or exitCode, expectOutput) and until, when
// set, holds.
type Retry struct {
	// Until is a boolean expression that must hold after an attempt; it
	// sees the attempt's result under the operation's bind name, e.g.
	// `out.json.status.phase == "Running"`.
	Until string `json:"until,omitempty" yaml:"until,omitempty"`
	// ExitCode is the exit code an attempt must end with, in place of the
	// success (or, with expectError, failure) the command must otherwise
	// have.
	ExitCode *int `json:"exitCode,omitempty" yaml:"exitCode,omitempty"`
	// Timeout bounds the retries. It is added to the operation's default
	// timeout; an explicit operation timeout must leave room for it.
	// Default 30s.
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
}

// NodeExecOp runs a command inside a real node (its network namespace,
// its iptables, its containerd): what a `docker exec` into a kind node
// does. The docker backend only; a lab using it is refused on simulated
// nodes before anything boots.
type NodeExecOp struct {
	// Node to run in.
	Node string `json:"node" yaml:"node"`
	// Command and its arguments (no shell; use [sh, -c, "..."] for one).
	Command []string `json:"command" yaml:"command" jsonschema:"minItems=1"`
	// ExpectError makes the operation succeed only if the command fails.
	ExpectError bool `json:"expectError,omitempty" yaml:"expectError,omitempty"`
	// ExpectOutput is a regular expression the output must match.
	ExpectOutput string `json:"expectOutput,omitempty" yaml:"expectOutput,omitempty"`
	// Bind names the result for later expressions: NAME.stdout,
	// NAME.exitCode (0, or 1 when the command failed), NAME.json.
	Bind string `json:"bind,omitempty" yaml:"bind,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// ReadsOnly says the command only reads the node or the cluster
	// (iptables -L, crictl ps...): an exercise check with a nodeExec that
	// does not say so is destructive (kubelab check runs it only with
	// --final).
	ReadsOnly bool `json:"readOnly,omitempty" yaml:"readOnly,omitempty"`
}

// SleepOp waits for a fixed duration.
type SleepOp struct {
	// Duration to sleep, e.g. 5s.
	Duration Duration `json:"duration" yaml:"duration"`
}

// RecordOp binds the value of an expression to a name.
type RecordOp struct {
	// Name of the binding: an identifier that is not a built-in name.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// Expr is an expression of any type.
	Expr string `json:"expr" yaml:"expr" jsonschema:"minLength=1"`
}

// SnapshotOp saves an etcd snapshot (etcdctl snapshot save): a
// point-in-time copy of one healthy member's database, streamed to a file
// in the cluster's own directory.
type SnapshotOp struct {
	// Name of the snapshot: an identifier. A restore names it, and later
	// expressions read its status: NAME.revision, NAME.size, NAME.keys,
	// NAME.member.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
}

// RestoreOp restores every etcd member from a snapshot taken earlier
// (etcdutl snapshot restore), as a new etcd cluster. The control plane is
// stopped around it, as upstream guides say: schedulers and
// controller-managers, then apiservers, are killed; every member is
// stopped and gets a fresh data directory restored from the snapshot (its
// name, peer URL, the initial cluster, a new cluster token; the revision
// bumped by a billion and marked compacted); the members start; the
// apiservers start and the operation waits until they are ready; the
// schedulers and controller-managers start. Watchers relist.
type RestoreOp struct {
	// Snapshot is the name of a snapshot taken by an earlier snapshot
	// operation.
	Snapshot string `json:"snapshot" yaml:"snapshot" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
}

// ProbeOp starts a background probe: kubectl runs every interval, while
// the later steps run (and inject faults), until the lab ends. Later
// expressions read its record as probes.NAME (attempts, failures,
// maxGap, availability): what chaos tools call a steady-state probe,
// e.g. "the apiserver kept answering during the failover".
type ProbeOp struct {
	// Name identifies the probe in expressions: probes.NAME.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$"`
	// Every is the interval between attempts' starts. Default 1s; at
	// least 10ms.
	Every Duration `json:"every,omitzero" yaml:"every,omitempty"`
	// Kubectl are the arguments of the kubectl each attempt runs; an
	// attempt succeeds when kubectl exits 0 within attemptTimeout.
	Kubectl []string `json:"kubectl" yaml:"kubectl" jsonschema:"minItems=1"`
	// AttemptTimeout bounds one attempt. Default 5s.
	AttemptTimeout Duration `json:"attemptTimeout,omitzero" yaml:"attemptTimeout,omitempty"`
}
