package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/report"
)

// Timeline event kinds.
const (
	EventStep         = "step"          // a step started or ended
	EventObject       = "object"        // a Deployment or ReplicaSet was created
	EventFault        = "fault"         // a fault or repair was applied
	EventEtcdLeader   = "etcd-leader"   // the Raft leader changed
	EventEtcdTerm     = "etcd-term"     // the Raft term rose
	EventLease        = "lease"         // a leader-election lease changed hands
	EventPod          = "pod"           // a pod changed phase, node or was deleted
	EventNode         = "node"          // a node's Ready status changed
	EventEndpoints    = "endpoints"     // a Service's ready endpoint count changed
	EventEndpointsWho = "endpoints-all" // a Service's endpoints are whole again
)

// TimelineEvent is one thing that happened during a run, at an offset from
// the start of the steps.
type TimelineEvent = report.Event

type timeline struct {
	start time.Time
	mu    sync.Mutex
	evs   []TimelineEvent
}

func newTimeline(start time.Time) *timeline { return &timeline{start: start} }

func (t *timeline) add(kind, subject, detail string) { t.addAt(time.Now(), kind, subject, detail) }

// addAt adds an event that happened at at (events are sorted by time when
// read).
func (t *timeline) addAt(at time.Time, kind, subject, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.evs = append(t.evs, TimelineEvent{At: at.Sub(t.start), Kind: kind, Subject: subject, Detail: detail})
}

func (t *timeline) events() []TimelineEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]TimelineEvent(nil), t.evs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// watch records leader, term, lease, pod, node and endpoint changes until
// the returned function is called.
func (t *timeline) watch(ctx context.Context, c *cluster.Cluster, live Observer) func() {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	peak := map[string]int{} // service -> most ready endpoints seen
	live.OnChange(func(kind string, old, obj any) {
		switch kind {
		case "Pod":
			t.podChange(old, obj)
		case "Deployment", "ReplicaSet":
			if m, ok := obj.(metav1.Object); ok && old == nil && m.GetNamespace() != "kube-system" {
				t.add(EventObject, kind+" "+m.GetNamespace()+"/"+m.GetName(), "created")
			}
		case "Node":
			n, _ := obj.(*corev1.Node)
			o, _ := old.(*corev1.Node)
			if n != nil && o != nil && nodeReady(o) != nodeReady(n) {
				t.add(EventNode, n.Name, "Ready="+nodeReady(n))
			}
		case "Lease":
			l, _ := obj.(*coordinationv1.Lease)
			o, _ := old.(*coordinationv1.Lease)
			if l == nil || l.Namespace != "kube-system" || l.Spec.HolderIdentity == nil {
				return
			}
			if o == nil || o.Spec.HolderIdentity == nil || *o.Spec.HolderIdentity != *l.Spec.HolderIdentity {
				if strings.HasPrefix(l.Name, "apiserver-") {
					return
				}
				t.add(EventLease, l.Name, leaseDetail(*l.Spec.HolderIdentity))
			}
		case "EndpointSlice":
			s, _ := obj.(*discoveryv1.EndpointSlice)
			if s == nil {
				return
			}
			svc := s.Labels[discoveryv1.LabelServiceName]
			if svc == "" || svc == "kubernetes" {
				return
			}
			// A cache read: the timeline records what it has.
			eps, _ := live.Endpoints(ctx, s.Namespace, svc)
			n := len(readyIPs(eps))
			mu.Lock()
			prev, seen := peak[svc]
			if n > prev {
				peak[svc] = n
			}
			mu.Unlock()
			t.add(EventEndpoints, svc, fmt.Sprintf("%d ready", n))
			if seen && n == prev && prev > 0 {
				t.add(EventEndpointsWho, svc, fmt.Sprintf("all %d ready again", n))
			}
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var leader string
		var term int
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			rctx, rcancel := context.WithTimeout(ctx, 500*time.Millisecond)
			ms, _ := c.EtcdStatus(rctx)
			rcancel()
			r := assertions.RaftFrom(ms)
			if r.Leader != leader && (r.Leader != "" || leader != "") {
				if r.Leader == "" {
					t.add(EventEtcdLeader, "etcd", "no leader")
				} else {
					t.add(EventEtcdLeader, "etcd", r.Leader+" is leader")
				}
				leader = r.Leader
			}
			if r.Term > term {
				if term != 0 {
					t.add(EventEtcdTerm, "etcd", fmt.Sprintf("term %d -> %d", term, r.Term))
				}
				term = r.Term
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

func readyIPs(eps []assertions.Endpoint) []string {
	var out []string
	for _, e := range eps {
		if e.Ready {
			out = append(out, e.IP)
		}
	}
	return out
}

func nodeReady(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return string(c.Status)
		}
	}
	return "Unknown"
}

func (t *timeline) podChange(old, obj any) {
	p, _ := obj.(*corev1.Pod)
	o, _ := old.(*corev1.Pod)
	switch {
	case p == nil && o != nil:
		t.add(EventPod, o.Namespace+"/"+o.Name, "deleted")
	case o == nil && p != nil:
		t.add(EventPod, p.Namespace+"/"+p.Name, "created ("+string(p.Status.Phase)+")")
	case p != nil && o != nil:
		if o.Spec.NodeName == "" && p.Spec.NodeName != "" {
			t.add(EventPod, p.Namespace+"/"+p.Name, "scheduled to "+p.Spec.NodeName)
		}
		if o.Status.Phase != p.Status.Phase {
			detail := string(o.Status.Phase) + " -> " + string(p.Status.Phase)
			if p.Status.PodIP != "" {
				detail += " (IP " + p.Status.PodIP + ")"
			}
			t.add(EventPod, p.Namespace+"/"+p.Name, detail)
		}
		if o.DeletionTimestamp == nil && p.DeletionTimestamp != nil {
			t.add(EventPod, p.Namespace+"/"+p.Name, "terminating")
		}
	}
}

// leaseDetail describes a lease's new holder identity: "held by
// kube-scheduler-1", or "released" when a leader gave it up (an empty
// holderIdentity, written by a leader that releases on shutdown).
func leaseDetail(identity string) string {
	holder, _, _ := strings.Cut(identity, "_")
	if holder == "" {
		return leaseReleased
	}
	return leaseHeldBy + holder
}

const (
	leaseHeldBy   = "held by "
	leaseReleased = "released"
)
