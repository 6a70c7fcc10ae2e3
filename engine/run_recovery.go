package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/report"
)

// Recovery is how long the cluster took to react to a fault: from the fault
// to the first following event that shows the faulted thing recovering.
type Recovery = report.Recovery

// faulted is what a fault event hurt (or repaired).
type faulted struct {
	at     time.Duration
	label  string       // "kill etcd-leader=etcd-2", as printed
	name   string       // the component: etcd-2, kube-scheduler-1, worker-3
	role   cluster.Role // derived from the name; RoleNode for anything else
	down   bool         // the action takes the component away
	holder string       // for a scheduler or controller-manager: the lease holder just before
}

// parseFault reads a fault event (Subject is the action, Detail the
// target, "alias=name" when resolved from an alias such as etcd-leader).
// holders maps each lease to its holder as of the event.
func parseFault(e TimelineEvent, holders map[string]string) faulted {
	name := e.Detail
	if _, resolved, ok := strings.Cut(name, "="); ok {
		name = resolved
	}
	f := faulted{at: e.At, label: e.Subject + " " + e.Detail, name: name, role: roleOf(name)}
	switch cluster.Action(e.Subject) {
	case cluster.Kill, cluster.Stop, cluster.Restart, cluster.Pause, cluster.Partition:
		f.down = true
	}
	f.holder = holders[string(f.role)]
	return f
}

// roleOf derives a component's role from its name (etcd-1,
// kube-apiserver-2, kube-scheduler-1, kube-controller-manager-2,
// load-balancer). Any other name is a node; a target inside a node
// (worker-2/kubelet) counts as a fault on that node.
func roleOf(name string) cluster.Role {
	for _, r := range []cluster.Role{cluster.RoleEtcd, cluster.RoleAPIServer, cluster.RoleScheduler,
		cluster.RoleControllerManager} {
		if strings.HasPrefix(name, string(r)+"-") {
			return r
		}
	}
	if name == string(cluster.RoleLoadBalancer) {
		return cluster.RoleLoadBalancer
	}
	return cluster.RoleNode
}

// node is the node a fault hurt, "" when it is not a node fault.
func (f faulted) node() string {
	if f.role != cluster.RoleNode {
		return ""
	}
	n, _, _ := strings.Cut(f.name, "/")
	return n
}

// recovered says what e shows recovering from f, or "" when e is no
// recovery of what f hurt: a new etcd leader follows only an etcd fault; a
// lease handed to a new holder follows only a fault on a component of
// that lease (when the fault took a component away, only if it held the
// lease); endpoints whole again follow only a node fault, and a node's
// Ready change only a fault on that node.
func (f faulted) recovered(e TimelineEvent) string {
	switch e.Kind {
	case EventEtcdLeader:
		if f.role != cluster.RoleEtcd || e.Detail == "no leader" {
			return ""
		}
		return "new etcd leader (" + strings.TrimSuffix(e.Detail, " is leader") + ")"
	case EventLease:
		holder, held := strings.CutPrefix(e.Detail, leaseHeldBy)
		if !held || holder == "" || e.Subject != string(f.role) {
			return ""
		}
		if f.down && f.holder != "" && f.holder != f.name {
			return "" // it did not hold the lease: the move is not its doing
		}
		return e.Subject + " lease moved (" + holder + ")"
	case EventEndpointsWho:
		if f.node() == "" {
			return ""
		}
		return e.Subject + " endpoints whole again"
	case EventNode:
		if f.node() != e.Subject {
			return ""
		}
		return e.Subject + " " + e.Detail
	}
	return ""
}

// Recoveries derives a timeline's recovery figures: it pairs each
// recovery event with the latest fault before it on the same thing (see
// faulted.recovered), once per fault and kind of event, so that a fault
// on one component is never credited with another one's recovery.
func Recoveries(evs []TimelineEvent) []Recovery {
	var faults []faulted
	holders := map[string]string{} // lease -> holder, as the timeline goes
	seen := map[string]bool{}      // fault index + event kind + subject
	var out []Recovery
	for _, e := range evs {
		if e.Kind == EventFault {
			faults = append(faults, parseFault(e, holders))
			continue
		}
		if r, ok := pairRecovery(faults, e, seen); ok {
			out = append(out, r)
		}
		if e.Kind == EventLease {
			// "released" is no component: a fault on one does not free the lease.
			holders[e.Subject] = strings.TrimPrefix(e.Detail, leaseHeldBy)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FaultAt < out[j].FaultAt })
	return out
}

// pairRecovery pairs e with the latest fault it shows recovering from,
// unless that fault already has an event of e's kind and subject.
func pairRecovery(faults []faulted, e TimelineEvent, seen map[string]bool) (Recovery, bool) {
	for i := len(faults) - 1; i >= 0; i-- {
		f := faults[i]
		what := f.recovered(e)
		if what == "" {
			continue
		}
		key := fmt.Sprint(i, "/", e.Kind, "/", e.Subject)
		if seen[key] {
			return Recovery{}, false
		}
		seen[key] = true
		after := e.At - f.at
		return Recovery{Fault: f.label, Event: what, After: after, FaultAt: f.at,
			Describe: fmt.Sprintf("%s -> %s after %s", f.label, what, after.Round(time.Millisecond))}, true
	}
	return Recovery{}, false
}
