// Package schedextender is the scheduler extender a lab can give its
// kube-schedulers (spec.cluster.scheduler.extender): an HTTP service that
// speaks upstream's extender protocol (k8s.io/kube-scheduler/extender/v1)
// and decides with the lab's expressions, one for Filter (may the pod go
// to this node?) and one for Prioritize (a score 0-10 per node).
//
// The kube-scheduler component serves it on its own loopback, as an
// extender deployed as a sidecar container of the scheduler's pod is, and
// adds it to the scheduler's configuration: the real scheduler calls it
// over HTTP after its own Filter plugins, with the nodes they left, and
// after its own Score plugins, multiplying each score by the extender's
// weight and by 10 (MaxNodeScore / MaxExtenderPriority).
//
// It imports no scheduler code, so that package load can check the
// expressions before anything boots.
package schedextender

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"kubelab.dev/kubelab/observe"
)

// Name is how decisions (observe.Decision) name the extender among the
// scheduler's plugins.
const Name = observe.ExtenderPlugin

// Verbs are the paths the scheduler calls below the extender's URL prefix.
const (
	FilterVerb     = "filter"
	PrioritizeVerb = "prioritize"
)

// Policy is what the extender decides with: spec.cluster.scheduler.extender.
type Policy struct {
	// Filter is an expression of pod and node; a node passes when true.
	Filter string `json:"filter,omitempty"`
	// Prioritize is an expression of pod and node: the node's score, 0-10.
	Prioritize string `json:"prioritize,omitempty"`
	// Weight multiplies the extender's scores (default 1).
	Weight int64 `json:"weight,omitempty"`
}

// Node is what the expressions see of a node.
type Node struct {
	Name        string            `expr:"name"`
	Labels      map[string]string `expr:"labels"`
	Annotations map[string]string `expr:"annotations"`
	Taints      []Taint           `expr:"taints"`
}

// Taint is a node's taint as the expressions see it.
type Taint struct {
	Key    string `expr:"key"`
	Value  string `expr:"value"`
	Effect string `expr:"effect"`
}

// Pod is what the expressions see of the pod being scheduled.
type Pod struct {
	Name        string            `expr:"name"`
	Namespace   string            `expr:"namespace"`
	Labels      map[string]string `expr:"labels"`
	Annotations map[string]string `expr:"annotations"`
}

// Env is the environment of both expressions.
type Env struct {
	Pod  Pod  `expr:"pod"`
	Node Node `expr:"node"`
}

// CompileFilter compiles a Filter expression: it must be a bool of pod and node.
func CompileFilter(src string) (*vm.Program, error) {
	return expr.Compile(src, expr.Env(Env{}), expr.AsBool())
}

// CompilePrioritize compiles a Prioritize expression: an integer of pod and node.
func CompilePrioritize(src string) (*vm.Program, error) {
	return expr.Compile(src, expr.Env(Env{}), expr.AsInt())
}

// Extender serves one Policy.
type Extender struct {
	policy     Policy
	filter     *vm.Program
	prioritize *vm.Program
	log        io.Writer
	// Calls keeps what it decided per pod, for the scheduler's recording;
	// nil when nobody reads it.
	Calls *Calls
}

// New compiles p. log gets one line per call (the scheduler's stderr).
func New(p Policy, log io.Writer) (*Extender, error) {
	e := &Extender{policy: p, log: log}
	if p.Weight == 0 {
		e.policy.Weight = 1
	}
	var err error
	if p.Filter != "" {
		if e.filter, err = CompileFilter(p.Filter); err != nil {
			return nil, fmt.Errorf("extender filter: %w", err)
		}
	}
	if p.Prioritize != "" {
		if e.prioritize, err = CompilePrioritize(p.Prioritize); err != nil {
			return nil, fmt.Errorf("extender prioritize: %w", err)
		}
	}
	if e.filter == nil && e.prioritize == nil {
		return nil, fmt.Errorf("extender: want a filter or a prioritize expression")
	}
	return e, nil
}

// Config is the KubeSchedulerConfiguration's extenders entry (v1 field
// names) that makes the scheduler call e at urlPrefix.
func (e *Extender) Config(urlPrefix string) map[string]any {
	c := map[string]any{"urlPrefix": urlPrefix, "weight": e.policy.Weight, "httpTimeout": "5s", "nodeCacheCapable": false}
	if e.filter != nil {
		c["filterVerb"] = FilterVerb
	}
	if e.prioritize != nil {
		c["prioritizeVerb"] = PrioritizeVerb
	}
	return c
}

// Weight is the weight the scheduler multiplies the extender's scores by.
func (e *Extender) Weight() int64 { return e.policy.Weight }

// Filters reports whether e filters, Prioritizes whether it scores.
func (e *Extender) Filters() bool     { return e.filter != nil }
func (e *Extender) Prioritizes() bool { return e.prioritize != nil }

// ServeHTTP answers the scheduler's POST /filter and /prioritize.
func (e *Extender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil {
		http.Error(w, fmt.Sprintf("want ExtenderArgs with a pod: %v", err), http.StatusBadRequest)
		return
	}
	var nodes []v1.Node
	if args.Nodes != nil {
		nodes = args.Nodes.Items
	}
	var out any
	switch strings.Trim(r.URL.Path, "/") {
	case FilterVerb:
		if e.filter == nil {
			http.NotFound(w, r)
			return
		}
		out = e.doFilter(args.Pod, nodes)
	case PrioritizeVerb:
		if e.prioritize == nil {
			http.NotFound(w, r)
			return
		}
		list, err := e.doPrioritize(args.Pod, nodes)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = list
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func envOf(pod *v1.Pod, n *v1.Node) Env {
	node := Node{Name: n.Name, Labels: n.Labels, Annotations: n.Annotations}
	for _, t := range n.Spec.Taints {
		node.Taints = append(node.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	return Env{Node: node, Pod: Pod{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, Annotations: pod.Annotations}}
}

// doFilter keeps the nodes the expression accepts. A node it refuses is
// unschedulable and unresolvable: preempting pods would not change the
// node's labels, so the scheduler's preemption skips it.
func (e *Extender) doFilter(pod *v1.Pod, nodes []v1.Node) *extenderv1.ExtenderFilterResult {
	res := &extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
	for i := range nodes {
		v, err := expr.Run(e.filter, envOf(pod, &nodes[i]))
		switch ok, _ := v.(bool); {
		case err != nil:
			res.FailedAndUnresolvableNodes[nodes[i].Name] = fmt.Sprintf("the scheduler extender's filter failed on it: %v", err)
		case ok:
			res.Nodes.Items = append(res.Nodes.Items, nodes[i])
		default:
			res.FailedAndUnresolvableNodes[nodes[i].Name] = "the scheduler extender's filter refused it (" + e.policy.Filter + ")"
		}
	}
	e.say("filter %s/%s: %d node(s) in, passed %s, refused %s", pod.Namespace, pod.Name, len(nodes),
		names(res.Nodes.Items), keys(res.FailedAndUnresolvableNodes))
	if e.Calls != nil {
		e.Calls.filtered(pod.UID, res.FailedAndUnresolvableNodes)
	}
	return res
}

// doPrioritize scores every node 0-10 (MaxExtenderPriority); a score out
// of that range is an error the scheduler reports, as upstream's own
// extenders' would be.
func (e *Extender) doPrioritize(pod *v1.Pod, nodes []v1.Node) (extenderv1.HostPriorityList, error) {
	list := make(extenderv1.HostPriorityList, 0, len(nodes))
	var parts []string
	for i := range nodes {
		v, err := expr.Run(e.prioritize, envOf(pod, &nodes[i]))
		if err != nil {
			return nil, fmt.Errorf("the scheduler extender's prioritize failed on node %s: %w", nodes[i].Name, err)
		}
		score, _ := v.(int)
		if score < 0 || int64(score) > extenderv1.MaxExtenderPriority {
			return nil, fmt.Errorf("the scheduler extender's prioritize gave node %s %d, want 0-%d (%s)", nodes[i].Name, score, extenderv1.MaxExtenderPriority, e.policy.Prioritize)
		}
		list = append(list, extenderv1.HostPriority{Host: nodes[i].Name, Score: int64(score)})
		parts = append(parts, fmt.Sprintf("%s=%d", nodes[i].Name, score))
	}
	sort.Strings(parts)
	e.say("prioritize %s/%s: %s (x weight %d x 10)", pod.Namespace, pod.Name, strings.Join(parts, " "), e.policy.Weight)
	if e.Calls != nil {
		e.Calls.scored(pod.UID, list)
	}
	return list, nil
}

func (e *Extender) say(format string, args ...any) {
	if e.log != nil {
		fmt.Fprintf(e.log, "scheduler extender: "+format+"\n", args...)
	}
}

func names(nodes []v1.Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return list(out)
}

func keys(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return list(out)
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// Calls keeps the extender's answers per pod until the scheduler's
// recording takes them (Take), at the end of the pod's cycle.
type Calls struct {
	mu  sync.Mutex
	pod map[types.UID]*Call
}

// Call is what the extender answered in one pod's cycle.
type Call struct {
	// Refused maps the nodes the filter refused to the reason given.
	Refused map[string]string
	// Scores are the prioritize scores, 0-10, by node.
	Scores map[string]int64
	at     time.Time
}

// NewCalls makes an empty record.
func NewCalls() *Calls { return &Calls{pod: map[types.UID]*Call{}} }

// keep bounds the record: a call nobody took (a cycle the scheduler
// abandoned) is dropped after it.
const keep = 2 * time.Minute

func (c *Calls) get(uid types.UID) *Call {
	now := time.Now()
	for k, v := range c.pod {
		if now.Sub(v.at) > keep {
			delete(c.pod, k)
		}
	}
	call := c.pod[uid]
	if call == nil {
		call = &Call{}
		c.pod[uid] = call
	}
	call.at = now
	return call
}

func (c *Calls) filtered(uid types.UID, refused map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.get(uid)
	call.Refused = refused
	call.Scores = nil // a new cycle's filter
}

func (c *Calls) scored(uid types.UID, list extenderv1.HostPriorityList) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.get(uid)
	call.Scores = map[string]int64{}
	for _, h := range list {
		call.Scores[h.Host] = h.Score
	}
}

// Take returns and forgets what the extender answered for the pod, nil
// when it was not called.
func (c *Calls) Take(uid types.UID) *Call {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.pod[uid]
	delete(c.pod, uid)
	return call
}
