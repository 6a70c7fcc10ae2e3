package cluster

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Topology describes a lab cluster: how many of each control-plane
// component to run, which worker nodes to simulate or start, and the timings
// that labs shorten to make failover observable in seconds.
//
// A file writes it as spec.cluster: its fields (but Namespace) and those
// of the types below are v1alpha1.Topology's, documented there, and
// package load converts one into the other.
type Topology struct {
	Name               string        `json:"name,omitempty" yaml:"name,omitempty"`
	Etcd               int           `json:"etcd,omitempty" yaml:"etcd,omitempty"`
	APIServers         int           `json:"apiservers,omitempty" yaml:"apiservers,omitempty"`
	Schedulers         int           `json:"schedulers,omitempty" yaml:"schedulers,omitempty"`
	ControllerManagers int           `json:"controllerManagers,omitempty" yaml:"controllerManagers,omitempty"`
	Workers            int           `json:"workers,omitempty" yaml:"workers,omitempty"`
	Nodes              []NodeSpec    `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	Timings            Timings       `json:"timings,omitzero" yaml:"timings,omitempty"`
	Scheduler          SchedulerSpec `json:"scheduler,omitzero" yaml:"scheduler,omitempty"`
	Audit              *bool         `json:"audit,omitempty" yaml:"audit,omitempty"`
	Fresh              bool          `json:"fresh,omitempty" yaml:"fresh,omitempty"`
	Stacked            bool          `json:"stacked,omitempty" yaml:"stacked,omitempty"`
	// Namespace is where a run works on a cluster kubelab shares with
	// others (the kubeconfig backend): namespaced objects that name none
	// go there, expressions look there, and kubectl defaults to it. Empty:
	// a namespace of the run's own, created and deleted with it. An
	// exercise sets the namespace its statement names ("default"), which
	// kubelab uses without owning it: it takes over no object there and
	// deletes only what it labelled. Backends that own their cluster
	// ignore it; it is set by kubelab, not written in a lab file.
	Namespace string `json:"-" yaml:"-"`
}

// Audited reports whether the apiservers write an audit log.
func (t Topology) Audited() bool { return t.Audit == nil || *t.Audit }

// SchedulerSpec configures the kube-schedulers.
type SchedulerSpec struct {
	Config   map[string]any `json:"config,omitempty" yaml:"config,omitempty"`
	Record   *bool          `json:"record,omitempty" yaml:"record,omitempty"`
	Extender *ExtenderSpec  `json:"extender,omitempty" yaml:"extender,omitempty"`
}

// ExtenderSpec is the scheduler extender kubelab serves beside each
// kube-scheduler (package schedextender, whose Policy has its JSON form).
type ExtenderSpec struct {
	Filter     string `json:"filter,omitempty" yaml:"filter,omitempty"`
	Prioritize string `json:"prioritize,omitempty" yaml:"prioritize,omitempty"`
	Weight     int64  `json:"weight,omitempty" yaml:"weight,omitempty"`
}

// Recorded reports whether the schedulers record their decisions.
func (s SchedulerSpec) Recorded() bool { return s.Record == nil || *s.Record }

// ObserveFor settles what t left unset of its observation (the audit log,
// the scheduler's recording) by what a run needs: each is on where needs
// names the capability that reads it, the audit log also where traces is
// set (an HTML report draws each Deployment's trace from it), and both
// are off elsewhere. What t sets explicitly stays as it is. Observation
// is not free: at 10,000 pods the audit log writes ~170 MB and the
// recording ~200 MB and a fifth of the scheduler's time.
func (t Topology) ObserveFor(needs map[Capability]string, traces bool) Topology {
	_, audit := needs[CapAuditLog]
	_, record := needs[CapSchedulingLog]
	audit = audit || traces
	if t.Audit == nil {
		t.Audit = &audit
	}
	if t.Scheduler.Record == nil {
		t.Scheduler.Record = &record
	}
	return t
}

// NodeSpec describes one worker node.
type NodeSpec struct {
	Name     string            `json:"name" yaml:"name"`
	Labels   map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	Taints   []Taint           `json:"taints,omitempty" yaml:"taints,omitempty"`
	Capacity map[string]string `json:"capacity,omitempty" yaml:"capacity,omitempty"`
	// ProxyMode is kube-proxy's mode on a real node: ProxyIPTables
	// (empty: the default) or ProxyNFTables.
	ProxyMode string `json:"proxyMode,omitempty" yaml:"proxyMode,omitempty"`
}

// kube-proxy modes a node may run (NodeSpec.ProxyMode).
const (
	ProxyIPTables = "iptables"
	ProxyNFTables = "nftables"
)

// ProxyModeNode is the index of the first node of t that sets a
// kube-proxy mode, -1 when none does: simulated nodes run no kube-proxy,
// so only a backend with real nodes can give them one.
func (t Topology) ProxyModeNode() int {
	return slices.IndexFunc(t.Nodes, func(n NodeSpec) bool { return n.ProxyMode != "" })
}

// Taint is a Node taint.
type Taint struct {
	Key    string `json:"key" yaml:"key"`
	Value  string `json:"value,omitempty" yaml:"value,omitempty"`
	Effect string `json:"effect" yaml:"effect"`
}

// Timings are the knobs labs turn to see failover in seconds rather than
// minutes. Zero values mean the upstream defaults.
type Timings struct {
	LeaseDuration          Duration `json:"leaseDuration,omitzero" yaml:"leaseDuration,omitempty"`
	RenewDeadline          Duration `json:"renewDeadline,omitzero" yaml:"renewDeadline,omitempty"`
	RetryPeriod            Duration `json:"retryPeriod,omitzero" yaml:"retryPeriod,omitempty"`
	NodeMonitorGracePeriod Duration `json:"nodeMonitorGracePeriod,omitzero" yaml:"nodeMonitorGracePeriod,omitempty"`
	NodeLeaseDuration      Duration `json:"nodeLeaseDuration,omitzero" yaml:"nodeLeaseDuration,omitempty"`
	TolerationSeconds      Duration `json:"tolerationSeconds,omitzero" yaml:"tolerationSeconds,omitempty"`
	EtcdCompactionInterval Duration `json:"etcdCompactionInterval,omitzero" yaml:"etcdCompactionInterval,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("4s").
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"4s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// UnmarshalText reads a duration string (used by YAML decoders).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes a duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// IsZero reports whether the duration is unset.
func (d Duration) IsZero() bool { return d.Duration == 0 }

// MaxNodes is the most nodes a cluster may have: one /24 of the pod
// network each. Backends may allow fewer (real nodes cost more).
const MaxNodes = 4000

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// WithDefaults returns a copy of t with defaults filled in: zero counts
// become 1, or in a stacked topology the number of etcd members (one of
// each component per control-plane node); negative ones are left for
// Validate to reject.
func (t Topology) WithDefaults() Topology {
	if t.Name == "" {
		t.Name = "kubelab"
	}
	if t.Etcd == 0 {
		t.Etcd = 1
	}
	for _, n := range []*int{&t.APIServers, &t.Schedulers, &t.ControllerManagers} {
		if *n == 0 {
			*n = 1
			if t.Stacked && t.Etcd > 0 {
				*n = t.Etcd
			}
		}
	}
	if len(t.Nodes) == 0 {
		if t.Workers == 0 {
			t.Workers = 1
		}
		if t.Workers < 0 {
			return t // no nodes: Validate says why
		}
		for i := 1; i <= t.Workers; i++ {
			t.Nodes = append(t.Nodes, NodeSpec{Name: fmt.Sprintf("worker-%d", i)})
		}
	}
	t.Workers = len(t.Nodes)
	return t
}

// ControlPlaneNodePrefix names the control-plane nodes of a stacked
// topology: control-plane-1, control-plane-2...
const ControlPlaneNodePrefix = "control-plane-"

// ControlPlaneNodes are the control-plane nodes of a stacked topology
// (none otherwise), each the components that share its index: as kubeadm
// stacks them, control-plane-2 is etcd-2, kube-apiserver-2,
// kube-controller-manager-2 and kube-scheduler-2, and its apiserver talks
// to its own etcd member only.
func (t Topology) ControlPlaneNodes() map[string][]string {
	if !t.Stacked {
		return nil
	}
	out := map[string][]string{}
	for i := 1; i <= t.Etcd; i++ {
		out[fmt.Sprintf("%s%d", ControlPlaneNodePrefix, i)] = []string{
			fmt.Sprintf("etcd-%d", i), fmt.Sprintf("kube-apiserver-%d", i),
			fmt.Sprintf("kube-controller-manager-%d", i), fmt.Sprintf("kube-scheduler-%d", i),
		}
	}
	return out
}

// CountFields are the JSON names of the topology's counts.
var CountFields = []string{"etcd", "apiservers", "schedulers", "controllerManagers", "workers"}

// ValidateExplicit validates t (not defaulted) whose counts were given
// explicitly where explicit(field) is true (a flag set, a key present in
// a file): there a 0 is an error, not the default.
func (t Topology) ValidateExplicit(explicit func(field string) bool) []error {
	d := t.WithDefaults()
	for _, c := range []struct {
		field     string
		given, to *int
	}{{"etcd", &t.Etcd, &d.Etcd}, {"apiservers", &t.APIServers, &d.APIServers},
		{"schedulers", &t.Schedulers, &d.Schedulers}, {"controllerManagers", &t.ControllerManagers, &d.ControllerManagers}} {
		if *c.given == 0 && explicit(c.field) {
			*c.to = 0
		}
	}
	if t.Workers == 0 && len(t.Nodes) == 0 && explicit("workers") {
		d.Nodes, d.Workers = nil, 0
	}
	return d.Validate()
}

// Validate reports every problem with a defaulted topology.
func (t Topology) Validate() []error {
	var errs []error
	if !nameRE.MatchString(t.Name) {
		errs = append(errs, fmt.Errorf("name %q: want lower-case letters, digits and '-', at most 40 characters", t.Name))
	}
	switch t.Etcd {
	case 1, 3, 5:
	default:
		errs = append(errs, fmt.Errorf("etcd: want 1, 3 or 5 members, got %d (an odd number, for a Raft quorum)", t.Etcd))
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"apiservers", t.APIServers}, {"schedulers", t.Schedulers}, {"controllerManagers", t.ControllerManagers}} {
		if c.n < 1 || c.n > 5 {
			errs = append(errs, fmt.Errorf("%s: want 1 to 5, got %d", c.name, c.n))
		}
	}
	if t.Stacked && (t.APIServers != t.Etcd || t.Schedulers != t.Etcd || t.ControllerManagers != t.Etcd) {
		errs = append(errs, fmt.Errorf("stacked: each control-plane node runs one etcd member, one apiserver, one scheduler and one controller-manager: "+
			"want apiservers, schedulers and controllerManagers equal to etcd (%d) or unset, got %d, %d and %d", t.Etcd, t.APIServers, t.Schedulers, t.ControllerManagers))
	}
	switch {
	case len(t.Nodes) > MaxNodes:
		errs = append(errs, fmt.Errorf("nodes: want at most %d, got %d", MaxNodes, len(t.Nodes)))
	case len(t.Nodes) == 0:
		errs = append(errs, fmt.Errorf("workers: want 1 to %d nodes, got %d", MaxNodes, t.Workers))
	}
	seen := map[string]bool{}
	for i, n := range t.Nodes {
		if !nameRE.MatchString(n.Name) {
			errs = append(errs, fmt.Errorf("nodes[%d].name %q: want a DNS label", i, n.Name))
		}
		if seen[n.Name] {
			errs = append(errs, fmt.Errorf("nodes[%d].name %q: duplicate", i, n.Name))
		}
		seen[n.Name] = true
		for j, tt := range n.Taints {
			switch tt.Effect {
			case "NoSchedule", "PreferNoSchedule", "NoExecute":
			default:
				errs = append(errs, fmt.Errorf("nodes[%d].taints[%d].effect: want NoSchedule, PreferNoSchedule or NoExecute, got %q", i, j, tt.Effect))
			}
		}
		switch n.ProxyMode {
		case "", ProxyIPTables, ProxyNFTables:
		default:
			errs = append(errs, fmt.Errorf("nodes[%d].proxyMode: want %s or %s (ipvs needs the ip_vs kernel module, which kubelab does not load), got %q", i, ProxyIPTables, ProxyNFTables, n.ProxyMode))
		}
	}
	return append(errs, t.Timings.Validate()...)
}

// Upstream defaults of the leader-election timings, used to check a
// partial setting against the values the components will really use.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// leaderElectionJitter is client-go's JitterFactor: the renew deadline
	// must exceed the retry period times it.
	leaderElectionJitter = 1.2
	// nodeMonitorPeriod is the --node-monitor-period kubelab passes to
	// every controller-manager.
	nodeMonitorPeriod = time.Second
)

// Validate reports every timing the components would refuse or that
// could not work, with the constraint it breaks. Unset (zero) timings
// stand for the upstream defaults.
func (tm Timings) Validate() []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"leaseDuration", tm.LeaseDuration.Duration}, {"renewDeadline", tm.RenewDeadline.Duration},
		{"retryPeriod", tm.RetryPeriod.Duration}, {"nodeMonitorGracePeriod", tm.NodeMonitorGracePeriod.Duration},
		{"nodeLeaseDuration", tm.NodeLeaseDuration.Duration}, {"tolerationSeconds", tm.TolerationSeconds.Duration},
		{"etcdCompactionInterval", tm.EtcdCompactionInterval.Duration},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("timings.%s: want a positive duration (or none for the upstream default), got %s", d.name, d.v))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	or := func(d Duration, def time.Duration) time.Duration {
		if d.Duration == 0 {
			return def
		}
		return d.Duration
	}
	lease, renew, retry := or(tm.LeaseDuration, DefaultLeaseDuration), or(tm.RenewDeadline, DefaultRenewDeadline), or(tm.RetryPeriod, DefaultRetryPeriod)
	if lease < time.Second {
		errs = append(errs, fmt.Errorf("timings.leaseDuration: want at least 1s, got %s", lease))
	}
	if renew < time.Second {
		errs = append(errs, fmt.Errorf("timings.renewDeadline: want at least 1s, got %s", renew))
	}
	if retry < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("timings.retryPeriod: want at least 100ms, got %s", retry))
	}
	if renew >= lease {
		errs = append(errs, fmt.Errorf("timings: renewDeadline (%s) must be shorter than leaseDuration (%s)%s", renew, lease,
			unsetNote(tm.RenewDeadline, tm.LeaseDuration)))
	}
	if float64(renew) <= leaderElectionJitter*float64(retry) {
		errs = append(errs, fmt.Errorf("timings: renewDeadline (%s) must be longer than %.1f x retryPeriod (%s)%s", renew, leaderElectionJitter, retry,
			unsetNote(tm.RenewDeadline, tm.RetryPeriod)))
	}
	if g := tm.NodeMonitorGracePeriod.Duration; g != 0 && g <= nodeMonitorPeriod {
		errs = append(errs, fmt.Errorf("timings.nodeMonitorGracePeriod: want more than the node monitor period (%s), got %s", nodeMonitorPeriod, g))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"nodeLeaseDuration", tm.NodeLeaseDuration.Duration}, {"tolerationSeconds", tm.TolerationSeconds.Duration}} {
		if d.v != 0 && (d.v < time.Second || d.v%time.Second != 0) {
			errs = append(errs, fmt.Errorf("timings.%s: want whole seconds, at least 1s, got %s", d.name, d.v))
		}
	}
	return errs
}

// unsetNote says which of two timings were left at their defaults.
func unsetNote(a, b Duration) string {
	switch {
	case a.Duration == 0 && b.Duration == 0:
		return ""
	case a.Duration == 0 || b.Duration == 0:
		return " (an unset timing is its upstream default: leaseDuration 15s, renewDeadline 10s, retryPeriod 2s)"
	}
	return ""
}
