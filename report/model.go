// Package report holds the one model of what a run found (Lab, Step, Op,
// Event...: the runner fills it, WriteJSON writes it with its APIVersion,
// Parse reads it back) and draws it as one self-contained HTML page: the
// steps with their status and duration, the failures with expected and
// observed values, the timeline drawn as SVG swimlanes (etcd members,
// leader leases, nodes, pods, faults, recovery times) and the
// apply-to-Running trace as a sequence diagram. `kubelab run --html`
// draws the runner's results and `kubelab report x.json --html` the same
// results read from their JSON report: the same page. No script, style
// sheet or font is fetched: everything is inline.
package report

import (
	"fmt"
	"io"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"kubelab.dev/kubelab/observe"
)

// PipelineStages are the apiserver's request pipeline in order: a refused
// request is drawn stopping at its stage.
var PipelineStages = []string{"authentication", "authorization", "admission", "validation", "etcd"}

// APIVersion is the version of the JSON report's shape: engine.WriteJSON
// writes it and Parse reads it. A report without one was written before
// reports had versions, in this same shape.
const APIVersion = "kubelab.dev/report/v1"

// The report model: what a run of labs, drills or graded submissions
// found, in one set of types. The runner fills them (package engine names
// them Result, StepResult, OpResult...), WriteJSON writes them, Parse
// reads them back, and the HTML page, the live browser view and grade draw
// them as they are. Durations are time.Durations, written in seconds.
type (
	// Report is the whole JSON report.
	Report struct {
		// APIVersion is APIVersion.
		APIVersion string `json:"apiVersion"`
		// Results are the labs (drills, graded submissions) in order.
		Results []*Lab `json:"results"`
	}

	// Status is the outcome of a lab, a step or an operation.
	Status string

	// Lab is the outcome of one lab (a drill's scenario, a graded
	// submission).
	Lab struct {
		Lab      string        `json:"lab"`
		Title    string        `json:"title"`
		File     string        `json:"file"`
		Status   Status        `json:"status"`
		Error    string        `json:"error,omitempty"`
		Started  time.Time     `json:"started"`
		Duration time.Duration `json:"duration,format:sec"`
		// BootDuration is how long the cluster took to come up.
		BootDuration time.Duration `json:"bootDuration,format:sec"`
		Steps        []Step        `json:"steps"`
		// Hooks are the catch, finally and cleanup operations that ran.
		Hooks    []Op    `json:"hooks,omitempty"`
		Timeline []Event `json:"timeline"`
		// Traces are the chains of writes, from the audit logs, behind each
		// Deployment the lab created.
		Traces []Trace `json:"traces,omitempty"`
		// Scheduling is the scheduler's last decision, plugin by plugin,
		// about every pod the lab's expressions asked scheduling() about.
		Scheduling []Decision `json:"scheduling,omitempty"`
		Recovery   []Recovery `json:"recovery,omitempty"`
		// Score is set when the result is a graded submission's: the
		// points and what was not applied.
		Score *Score `json:"score,omitempty"`
		// Kubeconfig of a cluster kept after failure.
		Kubeconfig string `json:"kubeconfig,omitempty"`
		// Pipeline are the requests the apiservers refused during the run,
		// each with the stage of the request pipeline that stopped it
		// (when the cluster's audit log is read).
		Pipeline []Request `json:"pipeline,omitempty"`
		// Drill is set on the last scenario of an interview drill: the
		// question, the learner's answer, the model answer, and how the
		// answer fared on each key point with the cluster's evidence.
		Drill *Drill `json:"drill,omitempty"`
		// Now is where a live timeline's axis ends (since the first
		// step): the lanes show each state lasting until now, not until
		// the last event. Zero in a report.
		Now time.Duration `json:"-"`
	}

	// Request is a request the apiservers refused, with the stage of
	// their request pipeline that stopped it and why (from the audit
	// log).
	Request struct {
		Time     time.Time `json:"time"`
		User     string    `json:"user"`
		Verb     string    `json:"verb"`
		Resource string    `json:"resource"`
		Code     int       `json:"code"`
		// Stage is authentication, authorization, admission or validation.
		Stage string `json:"stage"`
		// By names what refused it when known (RBAC, a policy, a webhook).
		By     string `json:"by,omitempty"`
		Reason string `json:"reason,omitempty"`
	}

	// Drill is an interview drill's question and answers.
	Drill struct {
		Question string `json:"question"`
		// Answered is set when the learner was asked (or gave
		// --answer-file): only then do the key points count as made or
		// missed.
		Answered    bool   `json:"answered"`
		Answer      string `json:"answer"`
		ModelAnswer string `json:"modelAnswer"`
		// KeyPoints are the drill's key points, each made or missed by
		// Answer.
		KeyPoints []KeyPoint `json:"keyPoints"`
	}

	// KeyPoint is how an answer fared on one key point of a drill.
	KeyPoint struct {
		// Point is the key point's statement.
		Point string `json:"point"`
		// Made says whether the answer made it.
		Made bool `json:"made"`
		// By is the sentence of the answer that made it ("" when missed).
		By string `json:"by,omitempty"`
		// Missing are the terms that would have made it: the first of
		// each group of terms the answer lacked.
		Missing []string `json:"missing,omitempty"`
		// Evidence is what the cluster showed of the point in this run.
		Evidence []string `json:"evidence,omitempty"`
	}

	// Score is the score line of a graded submission (absent for labs
	// and drills).
	Score struct {
		// Score is the points earned; Max the points of every check.
		Score int `json:"score"`
		Max   int `json:"max"`
		// PassingScore is the score needed to pass.
		PassingScore int `json:"passingScore"`
		// Passed says whether Score reached PassingScore.
		Passed bool `json:"passed"`
		// NotApplied lists the submission's objects that never reached
		// the cluster: refused by the contract or rejected by the API
		// server.
		NotApplied []string `json:"notApplied,omitempty"`
	}

	// Decision is the scheduler's last cycle for one pod, plugin by
	// plugin, as the scheduler recorded it (scheduling() in expressions:
	// assertions.Scheduling).
	Decision struct {
		observe.Decision
		// Best are the nodes with the highest total (several on a tie).
		Best []string `json:"best" expr:"best"`
		// Found is false until the scheduler had tried the pod.
		Found bool `json:"found" expr:"found"`
	}

	// Rejection is the Filter plugin that ruled a node out, and why.
	Rejection = observe.Rejection

	// Step is the outcome of one step.
	Step struct {
		Name     string        `json:"name"`
		Status   Status        `json:"status"`
		Duration time.Duration `json:"duration,format:sec"`
		Error    string        `json:"error,omitempty"`
		Ops      []Op          `json:"operations"`
	}

	// Op is the outcome of one operation.
	Op struct {
		Kind     string        `json:"kind"`
		Line     int           `json:"line"`
		Summary  string        `json:"summary"`
		Status   Status        `json:"status"`
		Duration time.Duration `json:"duration,format:sec"`
		Error    string        `json:"error,omitempty"`
		// Observed holds sub-expression values at the last evaluation of
		// a failed check.
		Observed []Observation `json:"observed,omitempty"`
		Output   string        `json:"output,omitempty"`
		// Bind is the name the operation bound its result to (record,
		// kubectl or script with bind...), for later expressions.
		Bind string `json:"bind,omitempty"`
	}

	// Observation is a sub-expression's value when a check failed.
	Observation struct {
		Expr  string `json:"expr"`
		Value string `json:"value"`
	}

	// Event is one thing that happened during a run, at an offset from
	// the start of the steps.
	Event struct {
		At      time.Duration `json:"at,format:sec"`
		Kind    string        `json:"kind"`
		Subject string        `json:"subject"`
		Detail  string        `json:"detail"`
	}

	// Recovery is how long the cluster took to react to a fault: from
	// the fault to the first following event that shows the faulted
	// thing recovering.
	Recovery struct {
		Fault    string        `json:"fault"`
		Event    string        `json:"event"`
		After    time.Duration `json:"after,format:sec"`
		FaultAt  time.Duration `json:"faultAt,format:sec"`
		Describe string        `json:"describe"`
	}

	// Trace is the chain of writes behind one Deployment.
	Trace struct {
		// Deployment as namespace/name.
		Deployment string `json:"deployment"`
		// Hops, oldest first.
		Hops []Hop `json:"hops"`
	}

	// Hop is one write of a trace.
	Hop = observe.Hop
)

// Statuses.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
	Errored Status = "error" // the lab could not run (cluster did not come up)
	// Interrupted: the run was stopped (Ctrl-C, SIGTERM) before the lab
	// ended; neither a pass nor a failure of the lab.
	Interrupted Status = "interrupted"
)

// Passed reports whether the lab passed.
func (l *Lab) Passed() bool { return l.Status == Passed }

func (e Event) String() string {
	return fmt.Sprintf("%8.3fs  %-13s %-28s %s", e.At.Seconds(), e.Kind, e.Subject, e.Detail)
}

// WriteJSON writes the report of labs, with its APIVersion; durations in
// seconds.
func WriteJSON(w io.Writer, labs []*Lab) error {
	enc := jsonv1.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Report{APIVersion: APIVersion, Results: labs})
}

// Parse reads a JSON report of this APIVersion (or of none: written
// before reports had versions).
func Parse(b []byte) ([]*Lab, error) {
	var r Report
	if err := jsonv1.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read JSON report: %w", err)
	}
	if r.APIVersion != "" && r.APIVersion != APIVersion {
		return nil, fmt.Errorf("read JSON report: apiVersion %q: this kubelab reads %s", r.APIVersion, APIVersion)
	}
	return r.Results, nil
}
