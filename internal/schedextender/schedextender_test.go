package schedextender

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

func node(name string, labels map[string]string, taints ...v1.Taint) v1.Node {
	return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.NodeSpec{Taints: taints}}
}

// call posts args to the extender's verb as the scheduler does.
func call(t *testing.T, h http.Handler, verb string, pod *v1.Pod, nodes ...v1.Node) *httptest.ResponseRecorder {
	t.Helper()
	b, err := json.Marshal(extenderv1.ExtenderArgs{Pod: pod, Nodes: &v1.NodeList{Items: nodes}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+verb, bytes.NewReader(b)))
	return rec
}

func TestFilterAndPrioritize(t *testing.T) {
	var log bytes.Buffer
	e, err := New(Policy{
		Filter:     `node.labels["disk"] != "hdd" || pod.labels["disk"] == "any"`,
		Prioritize: `node.labels["zone"] == pod.labels["zone"] ? 10 : any(node.taints, .effect == "PreferNoSchedule") ? 0 : 3`,
		Weight:     5,
	}, &log)
	if err != nil {
		t.Fatal(err)
	}
	e.Calls = NewCalls()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1", Labels: map[string]string{"zone": "b"}}}
	nodes := []v1.Node{
		node("worker-1", map[string]string{"disk": "hdd", "zone": "a"}),
		node("worker-2", map[string]string{"disk": "ssd", "zone": "a"}, v1.Taint{Key: "k", Effect: v1.TaintEffectPreferNoSchedule}),
		node("worker-3", map[string]string{"disk": "ssd", "zone": "b"}),
		node("worker-5", map[string]string{"disk": "ssd", "zone": "c"}),
	}

	rec := call(t, e, FilterVerb, pod, nodes...)
	var fr extenderv1.ExtenderFilterResult
	if err := json.Unmarshal(rec.Body.Bytes(), &fr); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("filter: %d %s (%v)", rec.Code, rec.Body, err)
	}
	if got := names(fr.Nodes.Items); got != "worker-2, worker-3, worker-5" {
		t.Errorf("filter passed %s", got)
	}
	if r := fr.FailedAndUnresolvableNodes["worker-1"]; !strings.Contains(r, "refused") || len(fr.FailedAndUnresolvableNodes) != 1 {
		t.Errorf("filter refused %v", fr.FailedAndUnresolvableNodes)
	}

	rec = call(t, e, PrioritizeVerb, pod, fr.Nodes.Items...)
	var list extenderv1.HostPriorityList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("prioritize: %d %s (%v)", rec.Code, rec.Body, err)
	}
	want := map[string]int64{"worker-2": 0, "worker-3": 10, "worker-5": 3}
	for _, h := range list {
		if want[h.Host] != h.Score {
			t.Errorf("prioritize %s = %d, want %d", h.Host, h.Score, want[h.Host])
		}
	}
	if len(list) != 3 {
		t.Errorf("prioritize scored %d nodes, want 3", len(list))
	}

	got := e.Calls.Take("u1")
	if got == nil || got.Refused["worker-1"] == "" || got.Scores["worker-3"] != 10 || len(got.Scores) != 3 {
		t.Errorf("calls of the cycle: %+v", got)
	}
	if e.Calls.Take("u1") != nil {
		t.Error("Take twice: want nil the second time")
	}
	for _, line := range []string{"filter default/web: 4 node(s) in, passed worker-2, worker-3, worker-5, refused worker-1", "prioritize default/web: worker-2=0 worker-3=10 worker-5=3 (x weight 5 x 10)"} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, log.String())
		}
	}

	cfg := e.Config("http://127.0.0.1:1234")
	if cfg["filterVerb"] != FilterVerb || cfg["prioritizeVerb"] != PrioritizeVerb || cfg["weight"] != int64(5) || cfg["urlPrefix"] != "http://127.0.0.1:1234" {
		t.Errorf("config %v", cfg)
	}
}

// A score out of 0-10 is the extender's error, which the scheduler
// reports, as it would of any extender.
func TestPrioritizeOutOfRange(t *testing.T) {
	e, err := New(Policy{Prioritize: `len(node.name) * 2`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := call(t, e, PrioritizeVerb, &v1.Pod{}, node("worker-1", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "gave node worker-1 16, want 0-10") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
	if rec := call(t, e, FilterVerb, &v1.Pod{}, node("worker-1", nil)); rec.Code != http.StatusNotFound {
		t.Errorf("filter of an extender without one: %d, want 404", rec.Code)
	}
}

func TestPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, "want a filter or a prioritize expression"},
		{Policy{Filter: `node.label["x"] == "y"`}, "extender filter"},
		{Policy{Filter: `node.name`}, "extender filter"},
		{Policy{Prioritize: `node.name == "a"`}, "extender prioritize"},
	} {
		if _, err := New(tc.p, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}
