package cluster

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Capability is something a backend can do to or see in its cluster
// beyond what the Kubernetes API offers to any client.
type Capability string

// Capabilities a lab may need.
const (
	// CapComponentFaults: kill, stop, start, restart, pause and resume
	// control-plane components.
	CapComponentFaults Capability = "component-faults"
	// CapNodeDown: take a node down and bring it back (nodeDown, nodeUp).
	CapNodeDown Capability = "node-down"
	// CapPartitions: cut a component off the network and heal it.
	CapPartitions Capability = "partitions"
	// CapEtcdRaft: reach etcd itself: its Raft state (raft.*, etcd-leader
	// targets) and its keys ($ETCDCTL in a script).
	CapEtcdRaft Capability = "etcd-raft"
	// CapEtcdSnapshots: save and restore etcd snapshots.
	CapEtcdSnapshots Capability = "etcd-snapshots"
	// CapAuditLog: read the apiservers' audit logs (audit(), trace()).
	CapAuditLog Capability = "audit-log"
	// CapSchedulingLog: read the scheduler's per-plugin decisions
	// (scheduling()).
	CapSchedulingLog Capability = "scheduling-log"
	// CapNodeInternals: look inside real nodes (iptables(), cri(),
	// nodeExec).
	CapNodeInternals Capability = "node-internals"
	// CapContainers: the pods' containers really run, so kubectl exec,
	// logs, attach, cp and port-forward reach them (simulated nodes run
	// none).
	CapContainers Capability = "containers"
	// CapComponentMetrics: read each control-plane component's own
	// /metrics (metric()).
	CapComponentMetrics Capability = "component-metrics"
)

// AllCapabilities lists every Capability.
var AllCapabilities = []Capability{
	CapComponentFaults, CapNodeDown, CapPartitions, CapEtcdRaft, CapEtcdSnapshots,
	CapAuditLog, CapSchedulingLog, CapNodeInternals, CapContainers, CapComponentMetrics,
}

// Capable is a backend that states what it can do. A backend that does not
// is taken to run its own control plane: every capability but partitions,
// etcd snapshots, node internals and containers, which it has when it
// implements Partitioner, EtcdRestorer and NodeExecer (real nodes run
// containers).
type Capable interface {
	Capabilities() []Capability
}

// Partitioner is a backend whose components sit on a network that can be
// cut (partition, heal).
type Partitioner interface {
	CanPartition() bool
}

// ErrMissingCapability is wrapped by every error that refuses a lab
// because its backend lacks something the lab needs.
var ErrMissingCapability = errors.New("backend lacks a capability the lab needs")

// ErrTopology is returned by a backend that cannot give the topology a
// lab asks for (an existing cluster with fewer nodes, or nodes whose
// capacity, taints or labels it would have to set). Like a missing
// capability, trying again does not help.
var ErrTopology = errors.New("the backend cannot give the cluster the lab asks for")

// CapabilitiesOf returns what b can do.
func CapabilitiesOf(b Backend) map[Capability]bool {
	out := map[Capability]bool{}
	if c, ok := b.(Capable); ok {
		for _, k := range c.Capabilities() {
			out[k] = true
		}
		return out
	}
	for _, k := range []Capability{CapComponentFaults, CapNodeDown, CapEtcdRaft, CapComponentMetrics} {
		out[k] = true
	}
	// A cluster may run without its records (to measure what they cost).
	t := b.Topology()
	out[CapAuditLog] = t.Audited()
	out[CapSchedulingLog] = t.Scheduler.Recorded()
	if p, ok := b.(Partitioner); ok && p.CanPartition() {
		out[CapPartitions] = true
	}
	if _, ok := b.(EtcdRestorer); ok {
		out[CapEtcdSnapshots] = true
	}
	if _, ok := b.(NodeExecer); ok {
		out[CapNodeInternals] = true
		out[CapContainers] = true
	}
	return out
}

// MissingError names the capabilities a backend lacks; it wraps
// ErrMissingCapability, and ErrNoNodeInternals or ErrNoEtcdRestore when
// those are among them.
type MissingError struct {
	Backend string
	Missing []Capability
	// Why maps a capability to what needs it ("kill etcd-leader", "raft").
	Why map[Capability]string
}

func (e *MissingError) Error() string {
	parts := make([]string, 0, len(e.Missing))
	for _, m := range e.Missing {
		s := string(m)
		if w := e.Why[m]; w != "" {
			s += " (" + w + ")"
		}
		parts = append(parts, s)
	}
	msg := fmt.Sprintf("the %s backend lacks %s", e.Backend, strings.Join(parts, ", "))
	for _, err := range e.Unwrap()[1:] {
		msg += "; " + err.Error()
	}
	return msg
}

// Unwrap lets errors.Is find ErrMissingCapability and the older sentinels.
func (e *MissingError) Unwrap() []error {
	errs := []error{ErrMissingCapability}
	for _, m := range e.Missing {
		switch m {
		case CapNodeInternals, CapContainers:
			if !slices.Contains(errs, ErrNoNodeInternals) {
				errs = append(errs, ErrNoNodeInternals)
			}
		case CapEtcdSnapshots:
			errs = append(errs, ErrNoEtcdRestore)
		}
	}
	return errs
}

// CheckCapabilities returns a *MissingError when b lacks one of needs
// (capability -> what needs it), nil when it has them all.
func CheckCapabilities(b Backend, needs map[Capability]string) error {
	have := CapabilitiesOf(b)
	var missing []Capability
	for k := range needs {
		if !have[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	return &MissingError{Backend: b.Name(), Missing: missing, Why: needs}
}

// Shared is a backend whose cluster kubelab did not create: each run works
// in a namespace of its own and labels every object it makes, so that Down
// removes exactly those.
type Shared interface {
	// RunNamespace is the namespace the run works in.
	RunNamespace() string
	// OwnsRunNamespace says whether the run created that namespace (and
	// deletes it as a whole); false for one it only works in, such as
	// "default", where objects are taken over or deleted one by one and
	// only when they carry the run's labels.
	OwnsRunNamespace() bool
	// RunLabels are the labels every object of the run carries.
	RunLabels() map[string]string
}

// Namespace is where namespaced objects that name no namespace go, and
// where expressions look unless told otherwise: the run's namespace on a
// Shared backend, "default" elsewhere.
func (c *Cluster) Namespace() string {
	if s, ok := c.Backend.(Shared); ok {
		return s.RunNamespace()
	}
	return "default"
}

// OwnsNamespace says whether Namespace belongs to this run as a whole:
// true on backends that own their cluster, and on a Shared one when the
// run created its namespace.
func (c *Cluster) OwnsNamespace() bool {
	if s, ok := c.Backend.(Shared); ok {
		return s.OwnsRunNamespace()
	}
	return true
}

// RunLabels are the labels objects this run makes must carry (nil when
// the backend owns its whole cluster).
func (c *Cluster) RunLabels() map[string]string {
	if s, ok := c.Backend.(Shared); ok {
		return s.RunLabels()
	}
	return nil
}
