package schedrecord

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"kubelab.dev/kubelab/cluster/controlplane"
	"kubelab.dev/kubelab/internal/schedextender"
	"kubelab.dev/kubelab/observe"
)

// cycleKey is where a cycle's record lives in the scheduler's CycleState.
const cycleKey fwk.StateKey = "kubelab.dev/decision"

// Options registers the wrappers of every Filter and Score plugin and the
// recorder, which appends decisions to the file at log. With an extender
// (nil: none), the recorder adds what it answered to each decision.
func Options(log string, ext *schedextender.Extender) ([]app.Option, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open scheduling log: %w", err)
	}
	w := &writer{f: f}
	var calls *schedextender.Calls
	if ext != nil {
		calls = schedextender.NewCalls()
		ext.Calls = calls
	}
	inTree := frameworkplugins.NewInTreeRegistry()
	opts := []app.Option{app.WithPlugin(recorderName, func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return newRecorder(args, h, w, calls)
	})}
	for _, name := range controlplane.SchedulerPluginNames() {
		points := controlplane.SchedulerPlugins[name]
		factory, ok := inTree[name]
		if !ok {
			return nil, fmt.Errorf("kube-scheduler has no in-tree plugin %q (the plugin table is stale)", name)
		}
		if points.Unrecorded || !points.Filter && !points.Score {
			continue
		}
		opts = append(opts, app.WithPlugin(wrapped(name), wrapFactory(name, points, factory)))
	}
	return opts, nil
}

func wrapFactory(name string, points controlplane.PluginPoints, factory frameworkruntime.PluginFactory) frameworkruntime.PluginFactory {
	return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		args, err := pluginArgs(name, args)
		if err != nil {
			return nil, err
		}
		inner, err := factory(ctx, args, h)
		if err != nil {
			return nil, err
		}
		w := &wrapper{name: name, fullName: wrapped(name), inner: inner}
		w.filter, _ = inner.(fwk.FilterPlugin)
		w.score, _ = inner.(fwk.ScorePlugin)
		if points.Filter != (w.filter != nil) || points.Score != (w.score != nil) {
			return nil, fmt.Errorf("plugin %s: the plugin table says filter=%t score=%t, the plugin says filter=%t score=%t",
				name, points.Filter, points.Score, w.filter != nil, w.score != nil)
		}
		return w, nil
	}
}

// pluginArgs decodes the arguments of a wrapper, which upstream leaves
// raw (it types arguments by plugin name, and the wrapper's name is not
// the plugin's), as the arguments of the plugin it wraps.
func pluginArgs(name string, args runtime.Object) (runtime.Object, error) {
	u, ok := args.(*runtime.Unknown)
	if !ok || u == nil || len(u.Raw) == 0 {
		return args, nil
	}
	gvk := configv1.SchemeGroupVersion.WithKind(name + "Args")
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(u.Raw, &gvk, nil)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", name, err)
	}
	return obj, nil
}

// wrapper calls one in-tree plugin at Filter and Score and records what it
// returned. It is enabled only at the extension points its plugin has.
type wrapper struct {
	// name is the plugin's, fullName the wrapper's: the framework asks for
	// it for every node and plugin (made on each call, it took 7% of a
	// recording scheduler's CPU at 1,000 nodes).
	name, fullName string
	inner          fwk.Plugin
	filter         fwk.FilterPlugin
	score          fwk.ScorePlugin
}

var (
	_ fwk.FilterPlugin      = (*wrapper)(nil)
	_ fwk.ScorePlugin       = (*wrapper)(nil)
	_ fwk.ScoreExtensions   = (*wrapper)(nil)
	_ fwk.EnqueueExtensions = (*wrapper)(nil)
)

func (w *wrapper) Name() string { return w.fullName }

// EventsToRegister re-queues a pod this wrapper rejected on the events its
// plugin asks for (all events when the plugin does not say).
func (w *wrapper) EventsToRegister(ctx context.Context) ([]fwk.ClusterEventWithHint, error) {
	if e, ok := w.inner.(fwk.EnqueueExtensions); ok {
		return e.EventsToRegister(ctx)
	}
	return []fwk.ClusterEventWithHint{{Event: fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All}}}, nil
}

func (w *wrapper) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	// The plugin's PreFilter may have asked to be skipped under its own name.
	if state.GetSkipFilterPlugins().Has(w.name) {
		return nil
	}
	st := w.filter.Filter(ctx, state, pod, ni)
	if st.IsSuccess() {
		return st // only rejections are recorded: no lookup of the record per node that fits
	}
	if c := cycleOf(state); c != nil && ctx.Err() == nil {
		c.filtered(ni.Node().Name, w.name, st)
	}
	return st
}

func (w *wrapper) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	if state.GetSkipScorePlugins().Has(w.name) {
		return 0, nil
	}
	// Recorded at NormalizeScore, which gets every node's raw score at
	// once: one record per plugin, not a lock per node and plugin.
	return w.score.Score(ctx, state, pod, ni)
}

// ScoreExtensions always normalizes, so the scores are seen: through the
// plugin's own NormalizeScore, or unchanged without one.
func (w *wrapper) ScoreExtensions() fwk.ScoreExtensions { return w }

// NormalizeScore gets the raw scores of every node, which it records with
// what the plugin's own NormalizeScore makes of them.
func (w *wrapper) NormalizeScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	if state.GetSkipScorePlugins().Has(w.name) {
		return nil
	}
	c := cycleOf(state)
	var raw []int64
	if c != nil {
		raw = c.inOrder(scores)
	}
	var st *fwk.Status
	if ext := w.score.ScoreExtensions(); ext != nil {
		st = ext.NormalizeScore(ctx, state, pod, scores)
	}
	if c != nil && st.IsSuccess() {
		c.scored(w.name, raw, c.inOrder(scores))
	}
	return st
}

// recorder starts a record at PreFilter and writes it at PostFilter (the
// pod fits nowhere) or PostBind (it was bound).
type recorder struct {
	args   recorderArgs
	handle fwk.Handle
	out    *writer
	// calls are the extender's answers (nil without one).
	calls *schedextender.Calls
}

var (
	_ fwk.PreFilterPlugin  = (*recorder)(nil)
	_ fwk.PostFilterPlugin = (*recorder)(nil)
	_ fwk.PostBindPlugin   = (*recorder)(nil)
)

func newRecorder(args runtime.Object, h fwk.Handle, out *writer, calls *schedextender.Calls) (*recorder, error) {
	r := &recorder{handle: h, out: out, calls: calls}
	u, ok := args.(*runtime.Unknown)
	if !ok || u == nil {
		return nil, fmt.Errorf("%s: want its arguments, got %T", recorderName, args)
	}
	if err := json.Unmarshal(u.Raw, &r.args); err != nil {
		return nil, fmt.Errorf("%s arguments: %w", recorderName, err)
	}
	return r, nil
}

func (r *recorder) Name() string { return recorderName }

func (r *recorder) PreFilter(_ context.Context, state fwk.CycleState, _ *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	state.Write(cycleKey, newCycle())
	return nil, nil
}

func (r *recorder) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// PostFilter runs last, after preemption found nothing: the pod fits on
// no node. The framework's own per-node statuses fill in the nodes a
// PreFilter ruled out before any Filter ran.
func (r *recorder) PostFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	c := cycleOf(state)
	if c == nil {
		c = newCycle()
	}
	// Before the framework's statuses: the extender's refusals are among
	// them, without a plugin's name.
	c.extender(r.calls.Take(pod.UID))
	if nodes, err := r.handle.SnapshotSharedLister().NodeInfos().List(); err == nil {
		for _, ni := range nodes {
			name := ni.Node().Name
			// Nodes no wrapper saw (a PreFilter ruled them out).
			if st := m.Get(name); st != nil {
				c.filtered(name, st.Plugin(), st)
			}
		}
	}
	r.out.write(c.decision(r.args, pod, ""))
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

func (r *recorder) PostBind(_ context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	if c := cycleOf(state); c != nil {
		c.extender(r.calls.Take(pod.UID))
		r.out.write(c.decision(r.args, pod, node))
	}
}

// writer appends decisions as JSON lines.
type writer struct {
	mu sync.Mutex
	f  *os.File
}

func (w *writer) write(d observe.Decision) {
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.f.Write(append(b, '\n'))
}

func cycleOf(state fwk.CycleState) *cycle {
	d, err := state.Read(cycleKey)
	if err != nil {
		return nil
	}
	c, _ := d.(*cycle)
	return c
}

// cycle is one scheduling cycle's record. Filter runs on many nodes at
// once and NormalizeScore on many plugins, so it locks. Preemption filters
// copies of the state: the copies share the record, and a node keeps the
// first rejection it got (the one the scheduler acted on).
//
// Scores are kept by position: the framework gives every Score plugin the
// same nodes in the same order, so one list of names serves them all, and
// totals and the itemized nodes come from sums and sorts over indices
// (kept in maps of node names, they cost a recording scheduler a tenth of
// its CPU at 1,000 nodes).
type cycle struct {
	mu       sync.Mutex
	rejected map[string]observe.Rejection
	// nodes are the scored nodes, in the order of the first score list;
	// index finds one, made only if a list comes in another order.
	nodes []string
	index map[string]int
	// raw and norm map a Score plugin to the scores of nodes, in order.
	raw, norm map[string][]int64
}

func newCycle() *cycle {
	return &cycle{rejected: map[string]observe.Rejection{}, raw: map[string][]int64{}, norm: map[string][]int64{}}
}

// inOrder returns the scores of list in the order of c.nodes, which the
// first list it sees sets. A node of list that c.nodes lacks is dropped.
func (c *cycle) inOrder(list fwk.NodeScoreList) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes == nil {
		c.nodes = make([]string, len(list))
		for i, s := range list {
			c.nodes[i] = s.Name
		}
	}
	out := make([]int64, len(c.nodes))
	if len(list) == len(c.nodes) {
		same := true
		for i, s := range list {
			if s.Name != c.nodes[i] {
				same = false
				break
			}
			out[i] = s.Score
		}
		if same {
			return out
		}
	}
	if c.index == nil {
		c.index = make(map[string]int, len(c.nodes))
		for i, n := range c.nodes {
			c.index[n] = i
		}
	}
	clear(out)
	for _, s := range list {
		if i, ok := c.index[s.Name]; ok {
			out[i] = s.Score
		}
	}
	return out
}

// Clone shares the record (see cycle).
func (c *cycle) Clone() fwk.StateData { return c }

// filtered records that plugin rejected node, unless the node already has
// a rejection (the first is the one the scheduler acted on). plugin may be
// a wrapper's name, as the framework reports it.
func (c *cycle) filtered(node, plugin string, st *fwk.Status) {
	if st.IsSuccess() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.rejected[node]; !ok {
		c.rejected[node] = observe.Rejection{Plugin: strings.TrimPrefix(plugin, wrapped("")),
			Code: st.Code().String(), Reason: st.Message()}
	}
}

// extender records what the extender answered in this cycle (nil: it was
// not called): the nodes its filter refused, and its scores as those of
// a plugin named schedextender.Name, raw 0-10 and, as the scheduler
// scales them, normalized x10 (MaxNodeScore / MaxExtenderPriority).
func (c *cycle) extender(call *schedextender.Call) {
	if call == nil {
		return
	}
	for node, reason := range call.Refused {
		c.filtered(node, schedextender.Name, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason))
	}
	c.mu.Lock()
	nodes := c.nodes
	c.mu.Unlock()
	if len(call.Scores) == 0 || nodes == nil {
		return
	}
	raw, norm := make([]int64, len(nodes)), make([]int64, len(nodes))
	for i, n := range nodes {
		raw[i] = call.Scores[n]
		norm[i] = raw[i] * (fwk.MaxNodeScore / extenderv1.MaxExtenderPriority)
	}
	c.scored(schedextender.Name, raw, norm)
}

// scored records one plugin's raw and normalized scores of every node, in
// the order of c.nodes.
func (c *cycle) scored(plugin string, raw, norm []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw[plugin], c.norm[plugin] = raw, norm
}

func (c *cycle) decision(args recorderArgs, pod *v1.Pod, node string) observe.Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := observe.Decision{Time: time.Now().UTC(), Profile: args.Profile, Pod: pod.Namespace + "/" + pod.Name, UID: string(pod.UID),
		Result: "Unschedulable", Selected: node, Filters: args.Filters, Filtered: c.rejected, Weights: args.Weights,
		Total: map[string]int64{}}
	if node != "" {
		d.Result = "Scheduled"
	}
	if len(c.norm) == 0 {
		if node != "" {
			// One feasible node: the scheduler binds it without scoring.
			d.Feasible = []string{node}
		}
		return d
	}
	total := make([]int64, len(c.nodes))
	for p, list := range c.norm {
		w := args.Weights[p]
		for i, score := range list {
			total[i] += score * w
		}
	}
	for i, n := range c.nodes {
		d.Total[n] = total[i]
	}
	d.Feasible = slices.Clone(c.nodes)
	sort.Strings(d.Feasible)
	keep := itemized(c.nodes, total, node, observe.DetailedNodes)
	d.Raw, d.Scores = byNode(c.nodes, c.raw, keep), byNode(c.nodes, c.norm, keep)
	d.Unitemized = len(d.Total) - len(d.Scores)
	return d
}

// itemized are the indices of the nodes whose per-plugin scores a
// decision writes down: every scored node up to n of them, else the n
// best by total (ties by name) and the selected node.
func itemized(nodes []string, total []int64, selected string, n int) []int {
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	if len(nodes) <= n {
		return order
	}
	sort.Slice(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if total[i] != total[j] {
			return total[i] > total[j]
		}
		return nodes[i] < nodes[j]
	})
	keep := order[:n:n]
	for _, i := range order[n:] {
		if nodes[i] == selected {
			keep = append(keep, i)
			break
		}
	}
	return keep
}

// byNode turns plugin -> scores in the order of nodes into node ->
// plugin -> score for the kept indices (nil when no plugin scored).
func byNode(nodes []string, lists map[string][]int64, keep []int) map[string]map[string]int64 {
	if len(lists) == 0 {
		return nil
	}
	out := make(map[string]map[string]int64, len(keep))
	for _, i := range keep {
		m := make(map[string]int64, len(lists))
		for p, list := range lists {
			m[p] = list[i]
		}
		out[nodes[i]] = m
	}
	return out
}
