package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"

	"github.com/yuin/goldmark"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/load"
)

// LabRun is a lab the page runs step by step on the session's cluster.
type LabRun struct {
	// Lab is the loaded lab (in the learner's language).
	Lab *load.Lab
	// Steps runs it: Options.Session.Steps(Lab).
	Steps *engine.Stepper
}

// LabState is the lab's progress, as the page receives it.
type LabState struct {
	// Next is the index of the step Next step runs.
	Next int `json:"next"`
	// Done is set once the lab ended (its hooks ran); Status and Error
	// are then the lab's.
	Done   bool          `json:"done"`
	Status engine.Status `json:"status,omitempty"`
	Error  string        `json:"error,omitempty"`
	// Running is set while a step runs.
	Running bool           `json:"running"`
	Steps   []LabStepState `json:"steps"`
	Hooks   []LabOp        `json:"hooks,omitempty"`
}

// LabStepState is a step that ran.
type LabStepState struct {
	Name    string        `json:"name"`
	Status  engine.Status `json:"status"`
	Error   string        `json:"error,omitempty"`
	Seconds float64       `json:"seconds"`
	Ops     []LabOp       `json:"ops"`
}

// LabOp is an operation that ran: its summary (the expression of a
// check), its status and, when it failed, why and what it observed; a
// command that passed, what it printed (engine.Shown).
type LabOp struct {
	Summary  string                   `json:"summary"`
	Status   engine.Status            `json:"status"`
	Error    string                   `json:"error,omitempty"`
	Observed []assertions.Observation `json:"observed,omitempty"`
	Output   string                   `json:"output,omitempty"`
	Seconds  float64                  `json:"seconds"`
}

func labOps(rs []engine.OpResult) []LabOp {
	out := make([]LabOp, 0, len(rs))
	for _, r := range rs {
		out = append(out, LabOp{Summary: r.Summary, Status: r.Status, Error: r.Error, Observed: r.Observed, Output: engine.Shown(r), Seconds: r.Duration.Seconds()})
	}
	return out
}

// labState is the lab's progress now.
func (s *Server) labState() *LabState {
	if s.o.Lab == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &LabState{Next: s.o.Lab.Steps.Next(), Running: s.labBusy.Load()}
	for _, sr := range s.labSteps {
		st.Steps = append(st.Steps, LabStepState{Name: sr.Name, Status: sr.Status, Error: sr.Error, Seconds: sr.Duration.Seconds(), Ops: labOps(sr.Ops)})
	}
	if r := s.labResult; r != nil {
		st.Done, st.Status, st.Error, st.Hooks = true, r.Status, r.Error, labOps(r.Hooks)
	}
	return st
}

// handleLabNext runs the lab's next step (POST /lab/next) or every step
// left and its hooks (POST /lab/end), one request at a time; the page
// sees each step end through the event stream.
func (s *Server) handleLab(toEnd bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.labBusy.CompareAndSwap(false, true) {
			http.Error(w, "a step is already running", http.StatusConflict)
			return
		}
		s.kickNow() // the page shows the step running
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.o.Lab.Lab.Timeout())
		defer cancel()
		p := s.o.Lab.Steps
		var res *engine.Result
		for {
			s.mu.Lock()
			done := s.labResult != nil
			s.mu.Unlock()
			if done {
				break
			}
			sr, ok := p.Step(ctx)
			if !ok { // every step ran: the hooks end the lab
				res = p.Finish(ctx)
				s.mu.Lock()
				s.labResult = res
				s.mu.Unlock()
				break
			}
			s.mu.Lock()
			s.labSteps = append(s.labSteps, sr)
			s.mu.Unlock()
			s.kickNow()
			if !toEnd && p.Next() < len(s.o.Lab.Lab.Spec.Steps) {
				break
			}
		}
		s.labBusy.Store(false)
		s.kickNow()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.labState())
	}
}

// labData adds the lab's title, description and steps to the page's data.
func (s *Server) labData(l *load.Lab, data map[string]any) error {
	md := func(src string) (template.HTML, error) {
		var b bytes.Buffer
		if err := goldmark.Convert([]byte(src), &b); err != nil {
			return "", fmt.Errorf("ui: lab %s: %w", l.Metadata.Name, err)
		}
		return template.HTML(b.String()), nil //nolint:gosec // goldmark escapes raw HTML unless told otherwise
	}
	type step struct {
		Name        string
		Description template.HTML
		Ops         []string
	}
	var steps []step
	for _, st := range l.Spec.Steps {
		d, err := md(st.Description)
		if err != nil {
			return err
		}
		var ops []string
		for i := range st.Try {
			ops = append(ops, st.Try[i].Summary())
		}
		steps = append(steps, step{Name: st.Name, Description: d, Ops: ops})
	}
	desc, err := md(l.Metadata.Description)
	if err != nil {
		return err
	}
	data["Title"], data["Name"], data["Lab"], data["LabDescription"], data["Steps"] = l.Metadata.Title, l.Metadata.Name, true, desc, steps
	return nil
}
