package grade

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/safetext"
	"kubelab.dev/kubelab/report"
)

// WriteSummary prints a grade for people, in p's language: what was refused and
// applied, each check with its points, and for failed checks what was
// expected, what was observed and the hint; then the score.
func WriteSummary(w io.Writer, p *i18n.Printer, g *Grade) {
	w = safetext.NewWriter(w) // the submission and the cluster wrote much of it
	who := ""
	if g.Learner != "" {
		who = p.Sprintf(" (learner %s)", g.Learner)
	}
	boot := "" // a live cluster was up already
	if g.BootDuration > 0 {
		boot = p.Sprintf(" (cluster up in %s)", g.BootDuration.Round(100*time.Millisecond))
	}
	p.Fprintf(w, "\n== %s: %s\n   submission %s%s\n   graded in %s%s\n", g.Exercise, g.Title, g.Submission, who,
		g.Duration.Round(100*time.Millisecond), boot)
	if len(g.Refused) > 0 {
		p.Fprintf(w, "\nRefused (not applied; checks that need these objects fail):\n")
		for _, r := range g.Refused {
			p.Fprintf(w, "   ✘ %s\n", indent(r.Error(), "     "))
		}
	}
	if len(g.Objects) > 0 {
		p.Fprintf(w, "\nApplied:\n")
		for _, o := range g.Objects {
			if o.Applied {
				p.Fprintf(w, "   ✔ %s (%s:%d)\n", o.Object, o.File, o.Line)
			} else {
				p.Fprintf(w, "   ✘ %s (%s:%d): rejected by the API server:\n       %s\n", o.Object, o.File, o.Line, indent(o.Error, "       "))
			}
		}
	}
	if len(g.Ignored) > 0 {
		p.Fprintf(w, "\nIgnored (not manifests): %s\n", strings.Join(g.Ignored, ", "))
	}
	switch g.Status {
	case StatusError:
		p.Fprintf(w, "\nCould not grade: %s\n", indent(g.Error, "   "))
	case StatusRefused:
		p.Fprintf(w, "\nScore 0: %s\n", indent(g.Error, "   "))
	}
	p.Fprintf(w, "\nChecks:\n")
	for _, c := range g.Checks {
		mark := "✔"
		switch c.Status {
		case engine.Skipped:
			mark = "–"
		case engine.Failed:
			mark = "✘"
		}
		p.Fprintf(w, "   %s %2d/%-2d %s\n", mark, c.Earned, c.Points, c.Name)
		if c.Status == engine.Passed {
			continue
		}
		if c.Error == SkippedDestructive {
			p.Fprintf(w, "            %s\n", c.Error)
			continue
		}
		const pad = "            "
		if c.Expected != "" {
			p.Fprintf(w, "%sexpected: %s\n", pad, indent(c.Expected, pad+"  "))
			p.Fprintf(w, "%sobserved: %s\n", pad, indent(strings.TrimSpace(c.Observed), pad+"  "))
		} else if c.Error != "" {
			p.Fprintf(w, "%s%s\n", pad, indent(c.Error, pad))
		}
		if c.Hint != "" {
			p.Fprintf(w, "%shint: %s\n", pad, mdInline(c.Hint))
		}
	}
	p.Fprintf(w, "\nScore: %d/%d, %s (passing score %d)\n", g.Score, g.Max, p.S(verdict(g)), g.PassingScore)
}

// indent puts pad after every line break of s.
func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// verdict is PASSED, FAILED or ERROR.
func verdict(g *Grade) string {
	switch {
	case g.Status == StatusError:
		return "ERROR"
	case g.Passed:
		return "PASSED"
	}
	return "FAILED"
}

// WriteJSON writes a grade as JSON: score, max, passing score,
// refusals, applied objects, checks (expected and observed values,
// operations) and timeline. Durations are in seconds.
func WriteJSON(w io.Writer, g *Grade) error {
	enc := jsonv1.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

// WriteJUnit writes one testsuite per grade and one testcase per
// check, with the check's points and earned points as testcase
// properties and the score as suite properties. A failed check's failure
// carries what was expected, what was observed and the hint; refusals go
// to the suite's system-err, the timeline to its system-out.
func WriteJUnit(w io.Writer, grades []*Grade) error {
	all := report.JUnit{Name: "kubelab grade"}
	for _, g := range grades {
		name := g.Exercise
		if g.Learner != "" {
			name += "/" + g.Learner
		}
		s := report.JUnitSuite{Name: name, Time: g.Duration.Seconds(), Timestamp: g.Started.UTC().Format(time.RFC3339)}
		s.Properties = []report.JUnitProperty{
			{Name: "exercise", Value: g.Exercise}, {Name: "learner", Value: g.Learner}, {Name: "submission", Value: g.Submission},
			{Name: "score", Value: strconv.Itoa(g.Score)}, {Name: "max", Value: strconv.Itoa(g.Max)},
			{Name: "passingScore", Value: strconv.Itoa(g.PassingScore)}, {Name: "passed", Value: strconv.FormatBool(g.Passed)},
			{Name: "status", Value: g.Status},
		}
		var errs strings.Builder
		for _, r := range g.Refused {
			s.Properties = append(s.Properties, report.JUnitProperty{Name: "refused", Value: r.Error()})
			fmt.Fprintf(&errs, "%s\n", r.Error())
		}
		for _, o := range g.Objects {
			if !o.Applied {
				fmt.Fprintf(&errs, "%s:%d: %s: rejected by the API server: %s\n", o.File, o.Line, o.Object, o.Error)
			}
		}
		if g.Error != "" {
			fmt.Fprintf(&errs, "could not grade: %s\n", g.Error)
		}
		s.SystemErr = errs.String()
		var tl strings.Builder
		for _, e := range g.Timeline {
			fmt.Fprintf(&tl, "  %s\n", e)
		}
		s.SystemOut = tl.String()
		for _, c := range g.Checks {
			tc := report.JUnitCase{Name: c.Name, Classname: name, Time: c.Duration.Seconds(), Properties: []report.JUnitProperty{
				{Name: "points", Value: strconv.Itoa(c.Points)}, {Name: "earned", Value: strconv.Itoa(c.Earned)},
			}}
			var out strings.Builder
			for _, o := range append(append([]engine.OpResult{}, c.Ops...), c.Finally...) {
				fmt.Fprintf(&out, "[%s %.3fs] %s\n", o.Status, o.Duration.Seconds(), o.Summary)
			}
			tc.SystemOut = out.String()
			switch {
			case c.Status == engine.Passed:
			case g.Status == StatusError:
				tc.Error = &report.JUnitFailure{Message: firstLine(c.Error), Type: "NotGraded", Body: c.Error}
			default:
				msg := firstLine(c.Error)
				if c.Expected != "" {
					msg = "expected " + firstLine(c.Expected)
				}
				tc.Failure = &report.JUnitFailure{Message: msg, Type: "CheckFailed", Body: checkDetails(c)}
			}
			s.AddCase(tc)
		}
		all.AddSuite(s)
	}
	return all.Write(w)
}

// checkDetails is a failed check's expected, observed, hint and error.
func checkDetails(c CheckResult) string {
	var b strings.Builder
	if c.Expected != "" {
		fmt.Fprintf(&b, "expected: %s\nobserved:\n%s\n", c.Expected, c.Observed)
	}
	if c.Hint != "" {
		fmt.Fprintf(&b, "hint: %s\n", strings.TrimSpace(c.Hint))
	}
	if c.Error != "" {
		fmt.Fprintf(&b, "\n%s\n", c.Error)
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// WriteMarkdown writes a grade as Markdown fit for a CI job summary
// ($GITHUB_STEP_SUMMARY): the verdict and score, refused objects, a table
// of checks, and for each failed check its hint, what was expected and
// what was observed.
func WriteMarkdown(w io.Writer, g *Grade) error {
	var b strings.Builder
	icon := map[string]string{"PASSED": "✅", "FAILED": "❌", "ERROR": "⚠️"}[verdict(g)]
	fmt.Fprintf(&b, "## %s %s: %d/%d (%s, passing score %d)\n\n", icon, g.Exercise, g.Score, g.Max, strings.ToLower(verdict(g)), g.PassingScore)
	fmt.Fprintf(&b, "**%s**", mdInline(g.Title))
	if g.Learner != "" {
		fmt.Fprintf(&b, " · learner `%s`", mdCode(g.Learner))
	}
	fmt.Fprintf(&b, " · submission `%s` · graded in %s\n\n", mdCode(g.Submission), g.Duration.Round(time.Second))
	switch g.Status {
	case StatusError:
		fmt.Fprintf(&b, "> **Could not grade:** %s\n\n", mdInline(g.Error))
	case StatusRefused:
		fmt.Fprintf(&b, "> **Score 0:** %s\n\n", mdInline(g.Error))
	}
	if len(g.Refused) > 0 {
		fmt.Fprintf(&b, "### Refused objects\n\nThese were not applied; the checks that need them fail.\n\n| File | Object | Rule | Why |\n|---|---|---|---|\n")
		for _, r := range g.Refused {
			where := r.File
			if r.Line > 0 {
				where = fmt.Sprintf("%s:%d", r.File, r.Line)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCodeCell(where), mdCell(r.Object), mdCodeCell(r.Rule), mdCell(r.Message))
		}
		b.WriteString("\n")
	}
	var rejected []AppliedObject
	for _, o := range g.Objects {
		if !o.Applied {
			rejected = append(rejected, o)
		}
	}
	if len(rejected) > 0 {
		fmt.Fprintf(&b, "### Rejected by the API server\n\n| File | Object | Error |\n|---|---|---|\n")
		for _, o := range rejected {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCodeCell(fmt.Sprintf("%s:%d", o.File, o.Line)), mdCell(o.Object), mdCell(o.Error))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "### Checks\n\n| | Check | Points |\n|---|---|---|\n")
	for _, c := range g.Checks {
		mark := "✅"
		if c.Status != engine.Passed {
			mark = "❌"
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d |\n", mark, mdCell(c.Name), c.Earned, c.Points)
	}
	fmt.Fprintf(&b, "| | **Total** | **%d/%d** |\n\n", g.Score, g.Max)
	for _, c := range g.Checks {
		if c.Status == engine.Passed {
			continue
		}
		fmt.Fprintf(&b, "#### ❌ %s (0/%d)\n\n", mdInline(c.Name), c.Points)
		if c.Hint != "" {
			fmt.Fprintf(&b, "**Hint:** %s\n\n", mdInline(strings.TrimSpace(c.Hint)))
		}
		if c.Expected != "" {
			fmt.Fprintf(&b, "**Expected:** %s\n\n**Observed:**\n\n```\n%s\n```\n\n", mdExpected(c.Expected), strings.ReplaceAll(strings.TrimSpace(c.Observed), "```", "'''"))
		} else if c.Error != "" {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.ReplaceAll(c.Error, "```", "'''"))
		}
		if c.Explanation != "" {
			fmt.Fprintf(&b, "<details><summary>Why it matters</summary>\n\n%s\n\n</details>\n\n", strings.TrimSpace(c.Explanation))
		}
	}
	_, err := io.WriteString(w, safetext.Escape(b.String()))
	return err
}

// mdHTML keeps a submission's text from opening HTML in the summary.
var mdHTML = strings.NewReplacer("<", "&lt;", ">", "&gt;")

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(mdHTML.Replace(strings.TrimSpace(s)), "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

// mdInline makes text safe on one Markdown line.
func mdInline(s string) string { return mdHTML.Replace(strings.Join(strings.Fields(s), " ")) }

// mdExpected renders an expectation as code unless it quotes commands
// itself.
func mdExpected(s string) string {
	s = mdInline(s)
	if strings.Contains(s, "`") {
		return s
	}
	return "`" + s + "`"
}

// mdCode makes text safe inside `code`.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// mdCodeCell is text as `code` in a table cell: a pipe, even inside a
// code span, ends a GitHub table cell unless escaped.
func mdCodeCell(s string) string { return "`" + mdCell(mdCode(s)) + "`" }

// Scoreboard is a batch's results: one row per learner, one column per
// check.
type Scoreboard struct {
	// Exercise is the exercise's name.
	Exercise string `json:"exercise"`
	// Title is the exercise's title.
	Title string `json:"title"`
	// Max is the points of all checks.
	Max int `json:"max"`
	// PassingScore is the score needed to pass.
	PassingScore int `json:"passingScore"`
	// Checks are the columns, in the exercise's order.
	Checks []ScoreboardCheck `json:"checks"`
	// Rows are the learners, in the order graded.
	Rows []ScoreboardRow `json:"learners"`
}

// ScoreboardCheck is one check's column: its name and points.
type ScoreboardCheck struct {
	// Name is the check's name.
	Name string `json:"name"`
	// Points the check is worth.
	Points int `json:"points"`
}

// ScoreboardRow is one learner's result.
type ScoreboardRow struct {
	// Learner names the submission.
	Learner string `json:"learner"`
	// Score is the points earned.
	Score int `json:"score"`
	// Max is the points of all checks.
	Max int `json:"max"`
	// Passed says whether Score reached the passing score.
	Passed bool `json:"passed"`
	// Status is StatusGraded or StatusError.
	Status string `json:"status"`
	// Earned is the points of each check, in the order of Checks.
	Earned []int `json:"earned"`
	// Refused counts the refused objects.
	Refused int `json:"refused"`
	// Duration of the grading, in seconds.
	Duration float64 `json:"duration"`
	// Error says why the submission could not be graded.
	Error string `json:"error,omitempty"`
}

// NewScoreboard tabulates grades of ex.
func NewScoreboard(ex *Exercise, grades []*Grade) *Scoreboard {
	sb := &Scoreboard{Exercise: ex.Metadata.Name, Title: ex.Metadata.Title, Max: ex.MaxScore(), PassingScore: ex.PassingScore()}
	for _, c := range ex.Spec.Checks {
		sb.Checks = append(sb.Checks, ScoreboardCheck{Name: c.Name, Points: c.Points})
	}
	for _, g := range grades {
		row := ScoreboardRow{Learner: g.Learner, Score: g.Score, Max: g.Max, Passed: g.Passed, Status: g.Status,
			Refused: len(g.Refused), Duration: g.Duration.Seconds(), Error: g.Error, Earned: make([]int, len(sb.Checks))}
		for i, c := range sb.Checks {
			for _, cr := range g.Checks {
				if cr.Name == c.Name {
					row.Earned[i] = cr.Earned
				}
			}
		}
		sb.Rows = append(sb.Rows, row)
	}
	return sb
}

// WriteCSV writes the scoreboard as CSV: learner, score, max, passed,
// status, refused, duration in seconds, one column per check (points
// earned; the header says "name (points)") and the error, if any.
func (sb *Scoreboard) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(safetext.NewWriter(w))
	head := []string{"learner", "score", "max", "passed", "status", "refused", "duration_seconds"}
	for _, c := range sb.Checks {
		head = append(head, fmt.Sprintf("%s (%d)", c.Name, c.Points))
	}
	if err := cw.Write(append(head, "error")); err != nil {
		return err
	}
	for _, r := range sb.Rows {
		rec := []string{csvText(r.Learner), strconv.Itoa(r.Score), strconv.Itoa(r.Max), strconv.FormatBool(r.Passed), r.Status,
			strconv.Itoa(r.Refused), strconv.FormatFloat(r.Duration, 'f', 1, 64)}
		for _, e := range r.Earned {
			rec = append(rec, strconv.Itoa(e))
		}
		if err := cw.Write(append(rec, csvText(firstLine(r.Error)))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a spreadsheet from reading a cell a learner named (a
// directory "=HYPERLINK(...)") as a formula: such a cell starts with '.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteJSON writes the scoreboard as JSON.
func (sb *Scoreboard) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sb)
}

// WriteTable prints the scoreboard as an aligned text table.
func (sb *Scoreboard) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(safetext.NewWriter(w), 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "LEARNER\tSCORE\tRESULT\tREFUSED\tFAILED CHECKS\n")
	for _, r := range sb.Rows {
		var failed []string
		for i, c := range sb.Checks {
			if r.Earned[i] < c.Points {
				failed = append(failed, c.Name)
			}
		}
		result := strings.ToLower(rowVerdict(r))
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%d\t%s\n", safetext.Line(r.Learner), r.Score, r.Max, result, r.Refused, strings.Join(failed, "; "))
	}
	return tw.Flush()
}

func rowVerdict(r ScoreboardRow) string {
	switch {
	case r.Status == StatusError:
		return "ERROR"
	case r.Passed:
		return "PASSED"
	}
	return "FAILED"
}

// WriteMarkdown writes the scoreboard as a Markdown table, one column per
// check, fit for a CI job summary.
func (sb *Scoreboard) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	passed := 0
	for _, r := range sb.Rows {
		if r.Passed {
			passed++
		}
	}
	fmt.Fprintf(&b, "## %s: scoreboard\n\n**%s** · %d of %d passed (passing score %d/%d)\n\n", sb.Exercise, mdInline(sb.Title), passed, len(sb.Rows), sb.PassingScore, sb.Max)
	b.WriteString("| Learner | Score | Result |")
	for _, c := range sb.Checks {
		fmt.Fprintf(&b, " %s (%d) |", mdCell(c.Name), c.Points)
	}
	b.WriteString(" Refused |\n|---|---|---|")
	for range sb.Checks {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range sb.Rows {
		icon := map[string]string{"PASSED": "✅", "FAILED": "❌", "ERROR": "⚠️"}[rowVerdict(r)]
		fmt.Fprintf(&b, "| %s | %d/%d | %s |", mdCell(r.Learner), r.Score, r.Max, icon)
		for _, e := range r.Earned {
			fmt.Fprintf(&b, " %d |", e)
		}
		fmt.Fprintf(&b, " %d |\n", r.Refused)
	}
	_, err := io.WriteString(w, safetext.Escape(b.String())+"\n")
	return err
}

// WriteExerciseStatement writes what a learner is given, in Markdown: the
// title, the statement, what a submission may contain, and how it is
// graded (each check's name and points, the passing score, the time
// limit), its headings in p's language. Hints, explanations, notes and
// samples are not shown.
func WriteExerciseStatement(w io.Writer, p *i18n.Printer, ex *Exercise) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", ex.Metadata.Title)
	var facts []string
	if d := ex.Metadata.Difficulty; d != "" {
		facts = append(facts, p.Sprintf("difficulty: %s", d))
	}
	if d := ex.Metadata.Duration.Duration; d > 0 {
		facts = append(facts, p.Sprintf("about %s", shortDuration(d)))
	}
	if len(ex.Metadata.Topics) > 0 {
		facts = append(facts, p.Sprintf("topics: %s", strings.Join(ex.Metadata.Topics, ", ")))
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, "_%s_\n\n", strings.Join(facts, " · "))
	}
	fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(ex.Spec.Statement))
	k := ex.Spec.Submission
	p.Fprintf(&b, "## What to submit\n\nA directory of Kubernetes manifests (`*.yaml`, `*.yml`, `*.json`), at most %d objects, of these kinds: %s; in namespace %s.\n\n",
		k.MaxObjects, strings.Join(k.Kinds, ", "), strings.Join(k.Namespaces, " or "))
	p.Fprintf(&b, "Submissions are data: nothing in them runs on the grading machine. Other kinds or namespaces, cluster-scoped objects not listed above, privileged containers, added capabilities, hostPath volumes, hostNetwork, hostPID, hostIPC, hostPort and workloads of more than %d replicas are refused (not applied), and the checks that need them fail.\n\n", MaxReplicas)
	t := ex.Spec.Cluster
	nodes := make([]string, 0, len(t.Nodes))
	for _, n := range t.Nodes {
		nodes = append(nodes, n.Name)
	}
	p.Fprintf(&b, "## Grading\n\nYour manifests are applied to a fresh cluster with worker nodes %s, then checked:\n\n| Check | Points |\n|---|---|\n", strings.Join(nodes, ", "))
	for _, c := range ex.Spec.Checks {
		fmt.Fprintf(&b, "| %s | %d |\n", mdCell(c.Name), c.Points)
	}
	p.Fprintf(&b, "\nPassing score: %d of %d. Time limit: %s.\n", ex.PassingScore(), ex.MaxScore(), shortDuration(ex.Timeout()))
	_, err := io.WriteString(w, b.String())
	return err
}

// shortDuration renders 15m0s as 15m and 1h0m0s as 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
