package observe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Hop is one write in the chain behind a user's action, as the audit log
// recorded it.
type Hop struct {
	// Kind of hop: "deployment", "replicaset", "pod", "binding",
	// "running", "endpointslice".
	Kind string `json:"kind" expr:"kind"`
	// Actor is the identity that made the write (a controller's
	// ServiceAccount, the scheduler, a node or kwok, the user).
	Actor string `json:"actor" expr:"actor"`
	// UserAgent of the writer.
	UserAgent string `json:"userAgent,omitempty" expr:"userAgent"`
	// Verb and Object written: e.g. create pods/web-7d9f-x2k4q.
	Verb   string `json:"verb" expr:"verb"`
	Object string `json:"object" expr:"object"`
	// Time of the request; After is the time since the first hop
	// (seconds); Latency is the apiserver's time to answer (seconds).
	Time    time.Time `json:"time" expr:"time"`
	After   float64   `json:"after" expr:"after"`
	Latency float64   `json:"latency" expr:"latency"`
	// APIServer that served it.
	APIServer string `json:"apiserver" expr:"apiserver"`
}

// TraceKinds are the hops of a Deployment's trace, in the order
// Kubernetes makes them.
var TraceKinds = []string{"deployment", "replicaset", "pod", "binding", "running", "endpointslice"}

// Trace reconstructs, from audit events, the chain of writes that made
// Deployment ns/name run: the user's write of the Deployment, the
// Deployment controller's ReplicaSet, the ReplicaSet controller's Pods,
// the scheduler's bindings, the node's (or kwok's) status updates to
// Running, and the EndpointSlice controller's writes of slices that list
// those Pods. Every hop is given, oldest first (one "running" per Pod).
func Trace(events []AuditEvent, ns, name string) []Hop {
	ok := func(e AuditEvent) bool { return e.Code >= 200 && e.Code < 300 && e.Namespace == ns }
	var hops []Hop
	add := func(kind string, e AuditEvent, object string) {
		hops = append(hops, Hop{Kind: kind, Actor: e.User, UserAgent: e.UserAgent, Verb: e.Verb, Object: object,
			Time: e.Time, Latency: e.Latency, APIServer: e.APIServer})
	}
	rs, pods := map[string]bool{}, map[string]bool{}
	for _, e := range events {
		if !ok(e) || e.Verb == "get" || e.Verb == "list" || e.Verb == "watch" {
			continue
		}
		switch {
		case e.Resource == "deployments" && e.Subresource == "" && e.Object == name && (e.Verb == "create" || e.Verb == "patch" || e.Verb == "update") && !strings.HasPrefix(e.User, "system:serviceaccount:kube-system:"):
			if !slices.ContainsFunc(hops, func(h Hop) bool { return h.Kind == "deployment" }) {
				add("deployment", e, "deployments/"+name)
			}
		case e.Resource == "replicasets" && e.Verb == "create" && slices.Contains(e.Owners, "Deployment/"+name):
			rs[e.Object] = true
			add("replicaset", e, "replicasets/"+e.Object)
		case e.Resource == "pods" && e.Subresource == "" && e.Verb == "create" && ownedBy(e.Owners, rs):
			pods[e.Object] = true
			add("pod", e, "pods/"+e.Object)
		case e.Resource == "pods" && e.Subresource == "binding" && pods[e.Name]:
			add("binding", e, "pods/"+e.Name+"/binding")
		case e.Resource == "pods" && e.Subresource == "status" && pods[e.Name] && e.Phase == "Running":
			if !slices.ContainsFunc(hops, func(h Hop) bool { return h.Kind == "running" && h.Object == "pods/"+e.Name+"/status" }) {
				add("running", e, "pods/"+e.Name+"/status")
			}
		case e.Resource == "endpointslices" && slices.ContainsFunc(e.Targets, func(t string) bool { return pods[strings.TrimPrefix(t, "Pod/")] }):
			add("endpointslice", e, "endpointslices/"+e.Object)
		}
	}
	sort.SliceStable(hops, func(i, j int) bool { return hops[i].Time.Before(hops[j].Time) })
	if len(hops) > 0 {
		for i := range hops {
			hops[i].After = hops[i].Time.Sub(hops[0].Time).Seconds()
		}
	}
	return hops
}

func ownedBy(owners []string, rs map[string]bool) bool {
	for _, o := range owners {
		if n, ok := strings.CutPrefix(o, "ReplicaSet/"); ok && rs[n] {
			return true
		}
	}
	return false
}

// Describe writes a hop for people: "+0.352s  system:kube-scheduler  create pods/web-x/binding".
func (h Hop) Describe() string {
	return fmt.Sprintf("+%.3fs  %-13s %-58s %s %s", h.After, h.Kind, h.Actor, h.Verb, h.Object)
}

// Chain is a trace as expressions see it.
type Chain struct {
	// Hops, oldest first.
	Hops []Hop `json:"hops" expr:"hops"`
	// Kinds in the order each first appears: for a Deployment that runs,
	// TraceKinds.
	Kinds []string `json:"kinds" expr:"kinds"`
	// First hop of each kind, by kind.
	First map[string]Hop `json:"first" expr:"first"`
}

// NewChain indexes hops.
func NewChain(hops []Hop) Chain {
	c := Chain{Hops: hops, Kinds: []string{}, First: map[string]Hop{}}
	if c.Hops == nil {
		c.Hops = []Hop{}
	}
	for _, h := range hops {
		if _, seen := c.First[h.Kind]; !seen {
			c.First[h.Kind] = h
			c.Kinds = append(c.Kinds, h.Kind)
		}
	}
	return c
}
