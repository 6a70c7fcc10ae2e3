package features

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gherkin "github.com/cucumber/gherkin/go/v42"
	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
)

// endStep records the result of the step that ended.
func (s *scenario) endStep(st *godog.Step, status engine.Status, err error) {
	r := engine.StepResult{Name: s.stepName(st), Status: status, Ops: s.ops}
	if !s.begun.IsZero() {
		r.Duration = time.Since(s.begun)
	}
	if err != nil && status == engine.Failed {
		r.Error = err.Error()
	}
	s.results = append(s.results, r)
	s.ops = nil
}

// stepResults is every step of the scenario: those that ended, then the
// rest as skipped. godog ends a scenario at its first failed step, before
// it skips the steps after it.
func (s *scenario) stepResults() []engine.StepResult {
	out := slices.Clone(s.results)
	for _, st := range s.steps[min(len(out), len(s.steps)):] {
		out = append(out, engine.StepResult{Name: s.stepName(st), Status: engine.Skipped})
	}
	return out
}

// stepName is a step as the feature file says it, keyword first. Where
// the file cannot tell (it changed since godog read it), the keyword is
// the one of the step's kind: And and But become what they continue.
func (s *scenario) stepName(st *godog.Step) string {
	var lang i18n.Lang
	if s.lib != nil {
		lang = s.lib.Lang
	}
	say := s.text
	for i, p := range s.steps {
		if p.Id == st.Id && i < len(s.keywords) {
			return stepKeyword(s.keywords[i], lang) + say(st.Text)
		}
	}
	switch st.Type {
	case messages.PickleStepType_CONTEXT:
		return stepKeyword("Given ", lang) + say(st.Text)
	case messages.PickleStepType_ACTION:
		return stepKeyword("When ", lang) + say(st.Text)
	case messages.PickleStepType_OUTCOME:
		return stepKeyword("Then ", lang) + say(st.Text)
	}
	return say(st.Text)
}

// text is a text of the scenario's feature file in the Library's
// language.
func (s *scenario) text(t string) string {
	if s.say == nil {
		return t
	}
	return s.say(t)
}

// stepKeywords reads the keywords ("Given ", "And "...) of a scenario's
// steps from its feature file: the Background's, then the scenario's. It
// returns nil unless it finds the scenario by name with n steps.
func stepKeywords(path, scenario string, n int) []string {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(src), (&messages.Incrementing{}).NewId)
	if err != nil || doc.Feature == nil {
		return nil
	}
	var background []string
	for _, c := range doc.Feature.Children {
		if c.Background != nil {
			for _, st := range c.Background.Steps {
				background = append(background, st.Keyword)
			}
		}
		if c.Scenario == nil || c.Scenario.Name != scenario {
			continue
		}
		kw := slices.Clone(background)
		for _, st := range c.Scenario.Steps {
			kw = append(kw, st.Keyword)
		}
		if len(kw) == n {
			return kw
		}
	}
	return nil
}

// Result is the scenario as a lab result, so that the lab reports (the
// JSON report and the HTML page drawn from it) show it: its Gherkin steps
// as the steps, the timeline, the recovery figures, the apply traces and
// the scheduling decisions.
func (r Report) Result() *engine.Result {
	feature := slug(strings.TrimSuffix(filepath.Base(r.Feature), filepath.Ext(r.Feature)))
	res := &engine.Result{
		Lab: feature + "/" + slug(r.Scenario), Title: cmp.Or(r.Title, r.Scenario), File: r.Feature, Status: engine.Passed,
		Started: r.Started, Duration: r.Duration, BootDuration: r.BootDuration, Steps: r.Steps,
		Timeline: r.Timeline, Recovery: r.Recovery, Traces: r.Traces, Scheduling: r.Scheduling, Kubeconfig: r.Kubeconfig,
		Drill: r.Drill,
	}
	switch {
	case r.Err != nil:
		res.Status, res.Error = engine.Failed, r.Err.Error()
	case r.Skipped != "":
		res.Status, res.Error = engine.Skipped, r.Skipped
	}
	return res
}

// Results are the reports as lab results, in order.
func Results(reps []Report) []*engine.Result {
	out := make([]*engine.Result, 0, len(reps))
	for _, r := range reps {
		out = append(out, r.Result())
	}
	return out
}
