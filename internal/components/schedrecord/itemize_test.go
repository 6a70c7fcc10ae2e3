package schedrecord

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"kubelab.dev/kubelab/internal/schedextender"
	"kubelab.dev/kubelab/observe"
)

// TestDecisionItemizes: past DetailedNodes scored nodes, a decision keeps
// the per-plugin scores of the best by total and of the selected node,
// counts the others, and keeps every node's total and feasibility.
func TestDecisionItemizes(t *testing.T) {
	const nodes = 30
	c := newCycle()
	raw, norm := fwk.NodeScoreList{}, fwk.NodeScoreList{}
	for i := range nodes {
		n := fmt.Sprintf("worker-%02d", i)
		raw = append(raw, fwk.NodeScore{Name: n, Score: int64(1000 * i)})
		norm = append(norm, fwk.NodeScore{Name: n, Score: int64(i)})
	}
	c.scored("NodeResourcesFit", c.inOrder(raw), c.inOrder(norm))
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	args := recorderArgs{Weights: map[string]int64{"NodeResourcesFit": 2}}
	d := c.decision(args, pod, "worker-03") // not among the best: a tie broken elsewhere
	if len(d.Total) != nodes || len(d.Feasible) != nodes || d.Total["worker-29"] != 58 {
		t.Fatalf("totals %v, feasible %d: want all %d nodes", d.Total, len(d.Feasible), nodes)
	}
	want := observe.DetailedNodes + 1
	if len(d.Scores) != want || len(d.Raw) != want || d.Unitemized != nodes-want {
		t.Fatalf("itemized %d normalized, %d raw, %d left out; want %d, %d, %d", len(d.Scores), len(d.Raw), d.Unitemized, want, want, nodes-want)
	}
	if d.Raw["worker-29"]["NodeResourcesFit"] != 29000 || d.Scores["worker-03"]["NodeResourcesFit"] != 3 {
		t.Errorf("best or selected node not itemized: raw %v, scores %v", d.Raw, d.Scores)
	}
	if _, ok := d.Scores["worker-09"]; ok {
		t.Error("worker-09 itemized, though not among the best")
	}

	small := newCycle()
	small.scored("NodeResourcesFit", small.inOrder(raw[:3]), small.inOrder(norm[:3]))
	if d := small.decision(args, pod, "worker-02"); len(d.Scores) != 3 || d.Unitemized != 0 || d.Result != "Scheduled" {
		t.Errorf("a decision within the limit lost detail: %+v", d)
	}
}

// TestDecisionAlignsScoreLists: scores are kept by the position of the
// first list's nodes; a plugin whose list comes in another order, or
// lacks a node, still adds each score to its own node.
func TestDecisionAlignsScoreLists(t *testing.T) {
	c := newCycle()
	first := fwk.NodeScoreList{{Name: "a", Score: 1}, {Name: "b", Score: 2}, {Name: "c", Score: 3}}
	c.scored("First", c.inOrder(first), c.inOrder(first))
	other := fwk.NodeScoreList{{Name: "c", Score: 30}, {Name: "a", Score: 10}}
	c.scored("Other", c.inOrder(other), c.inOrder(other))
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	d := c.decision(recorderArgs{Weights: map[string]int64{"First": 1, "Other": 2}}, pod, "c")
	want := map[string]int64{"a": 21, "b": 2, "c": 63}
	if fmt.Sprint(d.Total) != fmt.Sprint(want) {
		t.Errorf("totals %v, want %v", d.Total, want)
	}
	if d.Raw["c"]["Other"] != 30 || d.Raw["b"]["Other"] != 0 || d.Scores["a"]["First"] != 1 {
		t.Errorf("raw %v, scores %v: a score went to another node", d.Raw, d.Scores)
	}
	if fmt.Sprint(d.Feasible) != "[a b c]" || d.Result != "Scheduled" {
		t.Errorf("feasible %v, result %s", d.Feasible, d.Result)
	}
}

// TestDecisionWithoutScores: with one feasible node the scheduler binds it
// without scoring; the decision says it was the feasible one, with no
// totals.
func TestDecisionWithoutScores(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	d := newCycle().decision(recorderArgs{}, pod, "worker-1")
	if fmt.Sprint(d.Feasible) != "[worker-1]" || len(d.Total) != 0 || d.Scores != nil || d.Result != "Scheduled" {
		t.Errorf("bound without scores: %+v", d)
	}
	if d := newCycle().decision(recorderArgs{}, pod, ""); d.Feasible != nil || d.Result != "Unschedulable" {
		t.Errorf("unschedulable without scores: %+v", d)
	}
}

// TestDecisionWithExtender: the extender's refusals and scores join the
// cycle's record as those of a plugin named schedextender.Name, scaled as
// the scheduler scales them (x10), and count in the totals with its
// weight; a node a plugin rejected first keeps that plugin.
func TestDecisionWithExtender(t *testing.T) {
	c := newCycle()
	c.filtered("worker-4", wrapped("TaintToleration"), fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "untolerated taint"))
	list := fwk.NodeScoreList{{Name: "worker-2", Score: 40}, {Name: "worker-3", Score: 60}}
	c.scored("NodeResourcesFit", c.inOrder(list), c.inOrder(list))
	c.extender(&schedextender.Call{
		Refused: map[string]string{"worker-1": "refused", "worker-4": "refused"},
		Scores:  map[string]int64{"worker-2": 10, "worker-3": 2},
	})
	c.extender(nil) // a cycle the extender was not called in
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	args := recorderArgs{Filters: []string{"TaintToleration", schedextender.Name}, Weights: map[string]int64{"NodeResourcesFit": 1, schedextender.Name: 5}}
	d := c.decision(args, pod, "worker-2")
	if d.Filtered["worker-1"].Plugin != schedextender.Name || d.Filtered["worker-1"].Code != "UnschedulableAndUnresolvable" || d.Filtered["worker-4"].Plugin != "TaintToleration" {
		t.Errorf("filtered %v", d.Filtered)
	}
	if d.Raw["worker-2"][schedextender.Name] != 10 || d.Scores["worker-2"][schedextender.Name] != 100 || d.Scores["worker-3"][schedextender.Name] != 20 {
		t.Errorf("raw %v, scores %v", d.Raw, d.Scores)
	}
	if d.Total["worker-2"] != 40+100*5 || d.Total["worker-3"] != 60+20*5 {
		t.Errorf("totals %v", d.Total)
	}
}
