// Package report renders kubelab's JSON report of a run as one
// self-contained HTML page: the steps with their status and duration, the
// failures with expected and observed values, the timeline drawn as SVG
// swimlanes (etcd members, leader leases, nodes, pods, faults, recovery
// times) and the apply-to-Running trace as a sequence diagram. It reads
// the JSON report only, so `kubelab run --html` and `kubelab report
// x.json --html` draw the same page. No script, style sheet or font is
// fetched: everything is inline.
package report

import (
	"encoding/json"
	"fmt"
	"time"

	"kubelab.dev/kubelab/observe"
)

// PipelineStages are the apiserver's request pipeline in order: a refused
// request is drawn stopping at its stage.
var PipelineStages = []string{"authentication", "authorization", "admission", "validation", "etcd"}

// APIVersion is the version of the JSON report's shape: engine.WriteJSON
// writes it and Parse reads it. A report without one was written before
// reports had versions, in this same shape.
const APIVersion = "kubelab.dev/report/v1"

// The JSON report, as engine.WriteJSON writes it (durations in seconds):
// every field it writes has its counterpart here (a test decodes the
// runner's output strictly into these types).
type (
	// Report is the whole JSON report.
	Report struct {
		// APIVersion is APIVersion.
		APIVersion string `json:"apiVersion"`
		// Results are the labs (drills, graded submissions) in order.
		Results []Lab `json:"results"`
	}

	// Lab is one lab's result.
	Lab struct {
		Lab          string     `json:"lab"`
		Title        string     `json:"title"`
		File         string     `json:"file"`
		Status       string     `json:"status"`
		Error        string     `json:"error"`
		Started      time.Time  `json:"started"`
		Duration     float64    `json:"duration"`
		BootDuration float64    `json:"bootDuration"`
		Steps        []Step     `json:"steps"`
		Hooks        []Op       `json:"hooks"`
		Timeline     []Event    `json:"timeline"`
		Recovery     []Recovery `json:"recovery"`
		Traces       []Trace    `json:"traces"`
		Scheduling   []Decision `json:"scheduling"`
		Score        *Score     `json:"score"`
		Kubeconfig   string     `json:"kubeconfig"`
		Drill        *Drill     `json:"drill"`
		Pipeline     []Request  `json:"pipeline"`
		// Now is where a live timeline's axis ends (seconds since the
		// first step): the lanes show each state lasting until now, not
		// until the last event. Zero in a report.
		Now float64 `json:"-"`
	}

	// Request is a request the apiservers refused, with the stage of the
	// request pipeline that stopped it.
	Request struct {
		Time     time.Time `json:"time"`
		User     string    `json:"user"`
		Verb     string    `json:"verb"`
		Resource string    `json:"resource"`
		Code     int       `json:"code"`
		Stage    string    `json:"stage"`
		By       string    `json:"by"`
		Reason   string    `json:"reason"`
	}

	// Drill is an interview drill's question and answers (on its last
	// scenario).
	Drill struct {
		Question    string     `json:"question"`
		Answered    bool       `json:"answered"`
		Answer      string     `json:"answer"`
		ModelAnswer string     `json:"modelAnswer"`
		KeyPoints   []KeyPoint `json:"keyPoints"`
	}

	// KeyPoint is how the answer fared on one key point.
	KeyPoint struct {
		Point    string   `json:"point"`
		Made     bool     `json:"made"`
		By       string   `json:"by"`
		Missing  []string `json:"missing"`
		Evidence []string `json:"evidence"`
	}

	// Score is the score of a graded submission (absent for labs and
	// drills).
	Score struct {
		Score        int      `json:"score"`
		Max          int      `json:"max"`
		PassingScore int      `json:"passingScore"`
		Passed       bool     `json:"passed"`
		NotApplied   []string `json:"notApplied"`
	}

	// Decision is the scheduler's last cycle for one pod, plugin by
	// plugin, as the scheduler recorded it.
	Decision struct {
		observe.Decision
		// Best are the nodes with the highest total (several on a tie).
		Best []string `json:"best"`
		// Found is false until the scheduler had tried the pod.
		Found bool `json:"found"`
	}

	// Rejection is the Filter plugin that ruled a node out, and why.
	Rejection = observe.Rejection

	// Step is one step's result.
	Step struct {
		Name     string  `json:"name"`
		Status   string  `json:"status"`
		Duration float64 `json:"duration"`
		Error    string  `json:"error"`
		Ops      []Op    `json:"operations"`
	}

	// Op is one operation's result.
	Op struct {
		Kind     string        `json:"kind"`
		Line     int           `json:"line"`
		Summary  string        `json:"summary"`
		Status   string        `json:"status"`
		Duration float64       `json:"duration"`
		Error    string        `json:"error"`
		Observed []Observation `json:"observed"`
		Output   string        `json:"output"`
	}

	// Observation is a sub-expression's value when a check failed.
	Observation struct {
		Expr  string `json:"expr"`
		Value string `json:"value"`
	}

	// Event is one timeline event.
	Event struct {
		At      float64 `json:"at"`
		Kind    string  `json:"kind"`
		Subject string  `json:"subject"`
		Detail  string  `json:"detail"`
	}

	// Recovery pairs a fault with the recovery it caused.
	Recovery struct {
		Fault    string  `json:"fault"`
		Event    string  `json:"event"`
		After    float64 `json:"after"`
		FaultAt  float64 `json:"faultAt"`
		Describe string  `json:"describe"`
	}

	// Trace is the chain of writes behind a Deployment.
	Trace struct {
		Deployment string `json:"deployment"`
		Hops       []Hop  `json:"hops"`
	}

	// Hop is one write of a trace.
	Hop = observe.Hop
)

// Parse reads a JSON report of this APIVersion (or of none: written
// before reports had versions).
func Parse(b []byte) ([]Lab, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read JSON report: %w", err)
	}
	if r.APIVersion != "" && r.APIVersion != APIVersion {
		return nil, fmt.Errorf("read JSON report: apiVersion %q: this kubelab reads %s", r.APIVersion, APIVersion)
	}
	return r.Results, nil
}
