// Package assertions is the typed expr-lang environment labs, drills and
// exercises assert with: a fresh view of the cluster (pods, nodes,
// deployments, endpoints, leases, events, the etcd Raft table, component
// states, apiserver health) plus the bindings recorded by earlier steps.
//
// Expressions are compiled and type-checked against this environment when
// a lab is loaded, so a typo fails `kubelab validate`, not a run ten minutes
// in. The package reads the cluster; it never changes it.
package assertions

// Pod is what expressions see of a Pod.
type Pod struct {
	Name        string            `expr:"name"`
	Namespace   string            `expr:"namespace"`
	Phase       string            `expr:"phase"`
	Node        string            `expr:"node"`
	IP          string            `expr:"ip"`
	Ready       bool              `expr:"ready"`
	Restarts    int               `expr:"restarts"`
	Labels      map[string]string `expr:"labels"`
	Conditions  map[string]string `expr:"conditions"` // type -> status
	Deleting    bool              `expr:"deleting"`
	Owner       string            `expr:"owner"` // Kind/name of the controller
	Priority    int               `expr:"priority"`
	Annotations map[string]string `expr:"annotations"`
	Images      []string          `expr:"images"` // of its containers, in order
	// QOS is the pod's quality-of-service class, which the apiserver
	// derives from its containers' requests and limits: Guaranteed,
	// Burstable or BestEffort.
	QOS string `expr:"qos"`
	// LastTermination is why a container of the pod last ended
	// (OOMKilled, Error, Completed), from its current state or the one
	// before its restart; "" while none has.
	LastTermination string `expr:"lastTermination"`
}

// Taint is a node taint.
type Taint struct {
	Key    string `expr:"key"`
	Value  string `expr:"value"`
	Effect string `expr:"effect"`
}

// Node is what expressions see of a Node.
type Node struct {
	Name          string            `expr:"name"`
	Exists        bool              `expr:"exists"`
	Ready         bool              `expr:"ready"`
	ReadyStatus   string            `expr:"readyStatus"` // True, False, Unknown
	Unschedulable bool              `expr:"unschedulable"`
	Taints        []Taint           `expr:"taints"`
	Labels        map[string]string `expr:"labels"`
	Conditions    map[string]string `expr:"conditions"`
	Pods          int               `expr:"pods"` // non-terminated pods bound to it
}

// Deployment is what expressions see of a Deployment.
type Deployment struct {
	Name      string `expr:"name"`
	Exists    bool   `expr:"exists"`
	Replicas  int    `expr:"replicas"` // desired
	Ready     int    `expr:"ready"`
	Available int    `expr:"available"`
	Updated   int    `expr:"updated"`
	// Revision is the rollout revision the deployment controller
	// recorded (deployment.kubernetes.io/revision), 0 before it did.
	Revision    int               `expr:"revision"`
	Images      []string          `expr:"images"` // of its pod template's containers
	Labels      map[string]string `expr:"labels"`
	Annotations map[string]string `expr:"annotations"`
}

// ReplicaSet is what expressions see of a ReplicaSet.
type ReplicaSet struct {
	Name      string `expr:"name"`
	Owner     string `expr:"owner"` // Deployment/name
	Replicas  int    `expr:"replicas"`
	Ready     int    `expr:"ready"`
	Available int    `expr:"available"`
	// Revision is the rollout revision of the Deployment it belongs to
	// (deployment.kubernetes.io/revision).
	Revision    int               `expr:"revision"`
	Images      []string          `expr:"images"`
	Annotations map[string]string `expr:"annotations"`
}

// Endpoint is one ready address of a Service (from its EndpointSlices).
type Endpoint struct {
	IP    string `expr:"ip"`
	Pod   string `expr:"pod"`
	Node  string `expr:"node"`
	Ready bool   `expr:"ready"`
}

// Lease is a coordination.k8s.io Lease.
type Lease struct {
	Name        string  `expr:"name"`
	Holder      string  `expr:"holder"`    // holderIdentity
	Component   string  `expr:"component"` // component name of the holder
	Transitions int     `expr:"transitions"`
	Age         float64 `expr:"age"` // seconds since last renewal
}

// Event is a Kubernetes Event.
type Event struct {
	Reason  string `expr:"reason"`
	Message string `expr:"message"`
	Type    string `expr:"type"`
	Kind    string `expr:"kind"` // involved object's kind
	Object  string `expr:"object"`
	Count   int    `expr:"count"`
}

// Member is one etcd member's Raft status.
type Member struct {
	Name         string `expr:"name"`
	ID           string `expr:"id"`
	Reachable    bool   `expr:"reachable"`
	IsLeader     bool   `expr:"isLeader"`
	Term         int    `expr:"term"`
	RaftIndex    int    `expr:"raftIndex"`
	AppliedIndex int    `expr:"appliedIndex"`
	DBSize       int    `expr:"dbSize"`
}

// Raft is the etcd Raft table.
type Raft struct {
	Leader    string   `expr:"leader"` // "" when there is none
	HasLeader bool     `expr:"hasLeader"`
	Term      int      `expr:"term"` // highest term among reachable members
	Members   []Member `expr:"members"`
	Reachable int      `expr:"reachable"`
	Quorum    bool     `expr:"quorum"` // a majority is reachable and there is a leader
}

// Component is a process or container of the cluster.
type Component struct {
	Name  string `expr:"name"`
	Role  string `expr:"role"`
	State string `expr:"state"` // running, paused, stopped, exited
	PID   int    `expr:"pid"`
	// Exit says how an exited component ended, where it is known: "exit
	// status 1" (a scheduler that lost its lease), "signal: killed",
	// "OOMKilled"; "" while it runs.
	Exit string `expr:"exit"`
}

// APIServer is one kube-apiserver instance's health.
type APIServer struct {
	Name  string `expr:"name"`
	Ready bool   `expr:"ready"` // GET /readyz answered 200
	// Failing names the checks /readyz?verbose reports failed ("etcd",
	// "poststarthook/rbac/bootstrap-roles", ...): what keeps a starting
	// apiserver out of the load balancer's rotation. One that does not
	// answer has one entry, "no answer: " and why.
	Failing []string `expr:"failing"`
}

// CommandResult is what a kubectl or script operation with bind: NAME
// records: later expressions read NAME.stdout, NAME.exitCode and, when
// stdout is a JSON document (kubectl -o json), NAME.json.
type CommandResult struct {
	Stdout   string `expr:"stdout"` // stdout, trailing newlines trimmed
	Stderr   string `expr:"stderr"`
	ExitCode int    `expr:"exitCode"` // 0 on success; -1 when it did not run
	// JSON is stdout parsed as JSON (objects are map[string]any), nil when
	// stdout is not JSON.
	JSON any `expr:"json"`
}

// Probe is the record of a background probe (probe: {name: api, ...}), as
// of the evaluation: probes.api.failures == 0, probes.api.maxGap < 2.
type Probe struct {
	Attempts  int `expr:"attempts"`
	Successes int `expr:"successes"`
	Failures  int `expr:"failures"`
	// Streak is the number of successful attempts since the last failed
	// one: a steady state is "the recent attempts succeed", which holds
	// even when the first attempts, made while the cluster was still
	// warming up, failed.
	Streak int `expr:"streak"`
	// MaxGap is the longest time, in seconds, without a successful
	// attempt since the probe started (the current gap included).
	MaxGap float64 `expr:"maxGap"`
	// Availability is successes / attempts (1 before the first attempt).
	Availability float64 `expr:"availability"`
	LastError    string  `expr:"lastError"`
	Running      bool    `expr:"running"`
}

// Background is the record of an operation started with background: NAME,
// read as background.NAME while and after it runs: a drain waiting on a
// PodDisruptionBudget while later steps make room for it.
type Background struct {
	// Done is set once the operation ended: passed, failed, or stopped
	// at the lab's end.
	Done bool `expr:"done"`
	// Passed is set when it ended without error.
	Passed bool   `expr:"passed"`
	Error  string `expr:"error"`
	Output string `expr:"output"`
	// Seconds is how long it has run (so far, while not done).
	Seconds float64 `expr:"seconds"`
}

// Snapshot is an etcd snapshot saved by a snapshot operation, bound to the
// snapshot's name: before.revision, before.size.
type Snapshot struct {
	Name string `expr:"name"`
	// Member is the etcd member it was streamed from.
	Member string `expr:"member"`
	// Revision is the etcd revision of the last write it holds.
	Revision int `expr:"revision"`
	// Keys counts its keys (every revision kept since the last compaction).
	Keys int `expr:"keys"`
	// Size is the file's size in bytes.
	Size int `expr:"size"`
	// Hash is etcdutl's hash of its contents.
	Hash int `expr:"hash"`
	// File is where it is on the host running kubelab.
	File string `expr:"file"`
}
