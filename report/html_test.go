package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"kubelab.dev/kubelab/observe"
)

func TestHTMLFromJSONReport(t *testing.T) {
	b, err := os.ReadFile("testdata/labs.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := HTML(&out, b); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{`class="timeline"`, `class="seg leader"`, `class="marker"`, `class="step"`, "etcd-1", "kube-scheduler",
		// a summary and a table of contents first, collapsible steps,
		// each hop's latency in the sequence diagram, the watches back
		`<p class="summary">`, `<ol class="toc">`, `<details class="steps"`, ` ms)</text>`, `class="watch"`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	for _, banned := range []string{"<script src", "<link", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("report refers to something outside itself: %s", banned)
		}
	}
}

// TestHTMLScoreLine: a graded submission's section has its score and what
// was not applied; a lab's has neither, and no boot time when none was
// measured.
func TestHTMLScoreLine(t *testing.T) {
	const js = `{"results": [
	  {"lab": "spread/alice", "title": "Spread", "status": "failed", "duration": 3,
	   "steps": [{"name": "one per node (0/3 points)", "status": "failed", "error": "lost 3 of 3 points"}],
	   "score": {"score": 2, "max": 5, "passingScore": 4, "notApplied": ["debug.yaml:1:1: Pod default/debug: refused (privileged)"]}},
	  {"lab": "plain", "title": "Plain", "status": "passed", "duration": 1, "steps": []}]}`
	var out bytes.Buffer
	if err := HTML(&out, []byte(js)); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	graded, plain, ok := strings.Cut(html, `data-lab="plain"`)
	if !ok {
		t.Fatalf("no section for the second lab:\n%s", html)
	}
	for _, want := range []string{`<p class="score" data-score="2" data-max="5">Score <b>2/5</b>, failed (passing score 4)`,
		`<ul class="not-applied"><li><code>debug.yaml:1:1: Pod default/debug: refused (privileged)</code>`, "lost 3 of 3 points"} {
		if !strings.Contains(graded, want) {
			t.Errorf("the graded section lacks %s:\n%s", want, graded)
		}
	}
	for _, banned := range []string{`class="score"`, "not-applied", "cluster up in"} {
		if strings.Contains(plain, banned) {
			t.Errorf("the lab's section has %s:\n%s", banned, plain)
		}
	}
}

// TestHTMLDrawsThePipeline: a refused request is drawn through the request
// pipeline, the stages before its own passed, its own refused with what
// refused it and why, the ones after not reached.
func TestHTMLDrawsThePipeline(t *testing.T) {
	b := []byte(`{"apiVersion": "kubelab.dev/report/v1", "results": [{"lab": "rbac", "title": "RBAC", "status": "passed",
	  "pipeline": [{"user": "system:serviceaccount:default:nobody", "verb": "list", "resource": "secrets (default)", "code": 403,
	    "stage": "authorization", "by": "RBAC", "reason": "no RBAC policy matched"}]}]}`)
	var out bytes.Buffer
	if err := HTML(&out, b); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{
		`<div class="request" data-stage="authorization">`,
		`<span class="stage" data-stage="authentication">authentication</span>`,
		`<span class="stage refused" data-stage="authorization">authorization: refused by RBAC</span>`,
		`<span class="stage skipped" data-stage="admission">admission</span>`,
		`<span class="stage skipped" data-stage="etcd">etcd</span>`,
		"no RBAC policy matched",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the pipeline lacks %s", want)
		}
	}
}

// TestLiveTimelineEndsNow: a live timeline's lanes run until now, not
// until the last event (a node that went down 20 s ago is still down).
func TestLiveTimelineEndsNow(t *testing.T) {
	l := &Lab{Timeline: []Event{{At: time.Second, Kind: "node", Subject: "worker-1", Detail: "NotReady"}}, Now: 21 * time.Second}
	pic := Timeline(l)
	if pic.End != 21 {
		t.Fatalf("the axis ends at %v, want now (21)", pic.End)
	}
	for _, ln := range pic.Lanes {
		if ln.Name != "worker-1" {
			continue
		}
		last := ln.Segs[len(ln.Segs)-1]
		if last.At+last.Len != 21 {
			t.Errorf("worker-1's last state ends at %v, want 21: %+v", last.At+last.Len, ln.Segs)
		}
		return
	}
	t.Errorf("no lane for worker-1: %+v", pic.Lanes)
}

// TestSchedulingViewExplainsTheExtender: a decision with a scheduler
// extender gets its column and the sentence that says what it is; one
// without does not.
func TestSchedulingViewExplainsTheExtender(t *testing.T) {
	d := Decision{Decision: observe.Decision{Pod: "default/web", Result: "Scheduled", Selected: "worker-3",
		Feasible: []string{"worker-2", "worker-3"},
		Filtered: map[string]observe.Rejection{"worker-1": {Plugin: observe.ExtenderPlugin, Reason: "refused"}},
		Weights:  map[string]int64{"NodeResourcesFit": 1, observe.ExtenderPlugin: 5},
		Scores:   map[string]map[string]int64{"worker-2": {"NodeResourcesFit": 90, observe.ExtenderPlugin: 0}, "worker-3": {"NodeResourcesFit": 80, observe.ExtenderPlugin: 100}},
		Total:    map[string]int64{"worker-2": 90, "worker-3": 580}}}
	v := schedulingView(d)
	if !v.Extender || v.Plugins[0] != observe.ExtenderPlugin || v.Rows[2].Cells[0] != "100 × 5" || v.Rows[0].Rejected != "Extender: refused" {
		t.Errorf("view %+v", v)
	}
	d.Weights, d.Filtered = map[string]int64{"NodeResourcesFit": 1}, nil
	if schedulingView(d).Extender {
		t.Error("a decision without an extender says it has one")
	}
}
