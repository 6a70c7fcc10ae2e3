package engine

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/safetext"
	"kubelab.dev/kubelab/report"
)

// ConsoleProgress returns a Progress func that prints live progress lines:
// elapsed time, lab, step and message.
func ConsoleProgress(w io.Writer) func(Progress) {
	var mu sync.Mutex
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, progressLines(p))
	}
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// WriteSummary prints, in p's language, a table of labs and steps, the timeline and the
// recovery figures of each lab.
func WriteSummary(w io.Writer, p *i18n.Printer, results []*Result) {
	w = safetext.NewWriter(w) // lab files and the cluster wrote much of it
	for _, r := range results {
		if r.Status == Skipped { // nothing booted: the reason, no steps
			p.Fprintf(w, "\n== %s: %s (%s) — %s\n   %s\n", r.Lab, r.Title, r.File, strings.ToUpper(p.S(string(r.Status))), r.Error)
			continue
		}
		p.Fprintf(w, "\n== %s: %s (%s) — %s in %s (cluster up in %s)\n", r.Lab, r.Title, r.File, strings.ToUpper(p.S(string(r.Status))),
			r.Duration.Round(10*time.Millisecond), r.BootDuration.Round(10*time.Millisecond))
		if r.Status == Errored || r.Status == Interrupted && len(r.Steps) == 0 {
			p.Fprintf(w, "   %s\n", r.Error)
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		p.Fprintf(tw, "   STEP\tSTATUS\tDURATION\n")
		for _, s := range r.Steps {
			fmt.Fprintf(tw, "   %s\t%s\t%s\n", s.Name, p.S(string(s.Status)), s.Duration.Round(10*time.Millisecond))
		}
		tw.Flush()
		for _, s := range r.Steps {
			if s.Status == Failed {
				p.Fprintf(w, "\n   step %q failed:\n      %s\n", s.Name, indent(s.Error, "      "))
			}
		}
		for _, h := range r.Hooks {
			if h.Output != "" || h.Error != "" {
				p.Fprintf(w, "\n   %s:\n      %s\n", h.Summary, indent(strings.TrimSpace(h.Output+"\n"+h.Error), "      "))
			}
		}
		if len(r.Recovery) > 0 {
			p.Fprintf(w, "\n   Recovery:\n")
			for _, rc := range r.Recovery {
				fmt.Fprintf(w, "     %s\n", DescribeIn(p, rc))
			}
		}
	}
	passed, interrupted, skipped := 0, 0, 0
	for _, r := range results {
		switch r.Status {
		case Passed:
			passed++
		case Interrupted:
			interrupted++
		case Skipped:
			skipped++
		}
	}
	p.Fprintf(w, "\n%d passed, %d failed", passed, len(results)-passed-interrupted-skipped)
	if skipped > 0 {
		p.Fprintf(w, ", %d skipped", skipped)
	}
	if interrupted > 0 {
		p.Fprintf(w, ", %d interrupted", interrupted)
	}
	fmt.Fprintln(w)
}

// WriteTimeline prints a lab's timeline, one event per line.
func WriteTimeline(w io.Writer, r *Result) {
	for _, e := range r.Timeline {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// WriteJSON writes the results as JSON (report.WriteJSON): labs, steps,
// operations, verdicts, timeline and recovery figures, durations in
// seconds.
func WriteJSON(w io.Writer, results []*Result) error { return report.WriteJSON(w, results) }

// WriteJUnit writes one testsuite per lab and one testcase per step; a
// failed step's testcase carries the failure message with the observed
// values. The timeline goes to the suite's system-out.
func WriteJUnit(w io.Writer, results []*Result) error {
	var all report.JUnit
	for _, r := range results {
		s := report.JUnitSuite{Name: r.Lab, Time: r.Duration.Seconds(), Timestamp: r.Started.UTC().Format(time.RFC3339),
			Properties: []report.JUnitProperty{{Name: "file", Value: r.File}, {Name: "title", Value: r.Title},
				{Name: "boot_seconds", Value: fmt.Sprintf("%.3f", r.BootDuration.Seconds())}}}
		for _, rc := range r.Recovery {
			s.Properties = append(s.Properties, report.JUnitProperty{Name: "recovery", Value: rc.Describe})
		}
		var tl strings.Builder
		WriteTimeline(&tl, r)
		s.SystemOut = tl.String()
		if r.Status == Errored {
			s.AddCase(report.JUnitCase{Name: "cluster", Classname: r.Lab, Error: &report.JUnitFailure{Message: r.Error, Body: r.Error}})
		}
		for _, st := range r.Steps {
			c := report.JUnitCase{Name: st.Name, Classname: r.Lab, Time: st.Duration.Seconds()}
			var out strings.Builder
			for _, o := range st.Ops {
				fmt.Fprintf(&out, "[%s %.3fs] %s\n", o.Status, o.Duration.Seconds(), o.Summary)
				if o.Output != "" {
					fmt.Fprintf(&out, "%s\n", indent(o.Output, "    "))
				}
			}
			c.SystemOut = out.String()
			switch st.Status {
			case Failed:
				msg, _, _ := strings.Cut(st.Error, "\n")
				c.Failure = &report.JUnitFailure{Message: msg, Type: "StepFailed", Body: st.Error}
			case Skipped, Interrupted:
				c.Skip()
			}
			s.AddCase(c)
		}
		if r.Drill != nil && r.Drill.Answered {
			for _, kp := range r.Drill.KeyPoints {
				c := report.JUnitCase{Name: "key point: " + kp.Point, Classname: r.Lab + ".answer", SystemOut: strings.Join(kp.Evidence, "\n")}
				if !kp.Made {
					c.Failure = &report.JUnitFailure{Message: "the answer did not make this point (missing: " + strings.Join(kp.Missing, ", ") + ")", Type: "KeyPointMissed"}
				}
				s.AddCase(c)
			}
		}
		all.AddSuite(s)
	}
	return all.Write(w)
}
