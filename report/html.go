package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"kubelab.dev/kubelab/internal/i18n"
	"kubelab.dev/kubelab/internal/safetext"
)

//go:embed html.tmpl
var files embed.FS

var page = template.Must(template.New("html.tmpl").Funcs(template.FuncMap{
	// t, tf and lang are the page's language (HTMLIn); English here.
	"t":             func(s any) string { return fmt.Sprint(s) },
	"tf":            fmt.Sprintf,
	"lang":          func() string { return string(i18n.EN) },
	"secs":          func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) },
	"lower":         func(s any) string { return strings.ToLower(fmt.Sprint(s)) },
	"join":          strings.Join,
	"timelineCSS":   TimelineCSS,
	"schedulingCSS": SchedulingCSS,
	"traceCSS":      TraceCSS,
	"stages":        func() []string { return PipelineStages },
}).ParseFS(files, "html.tmpl"))

// SVG primitives, laid out in Go and written by the template.
type (
	rect struct {
		X, Y, W, H         float64
		Class, Title, Text string
	}
	line struct {
		X1, Y1, X2, Y2 float64
		Class, Title   string
	}
	text struct {
		X, Y                float64
		Class, Text, Anchor string
	}
	svg struct {
		W, H  float64
		Rects []rect
		Lines []line
		Texts []text
		Paths []string
	}
)

// pageView is the whole page: a summary, then every lab.
type pageView struct {
	Labs    []labView
	Summary string
}

type labView struct {
	Lab
	TL     timelineView
	Traces []traceView
	Sched  []schedView
}

// timelineView is a drawn timeline with its counts (for tests and the
// page's data attributes).
type timelineView struct {
	Svg            svg
	Lanes, Markers int
}

// timelineCSS styles a drawn timeline, in the report and in kubelab ui.
const timelineCSS = `svg{background:#fff;border:1px solid #e4e7ed;border-radius:6px}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
.lane{fill:#f6f7f9}.seg{stroke:#fff;stroke-width:.5}
.seg.leader{fill:#1565c0}.seg.follower{fill:#90caf9}.seg.down{fill:#c62828}
.seg.held{fill:#6a1b9a}.seg.released{fill:#bdbdbd}.seg.ready{fill:#43a047}.seg.notready{fill:#e53935}
.seg.passed{fill:#81c784}.seg.failed{fill:#e57373}.seg.running{fill:#ffd54f}.seg.errored{fill:#ce93d8}
svg rect.seg + text{fill:#fff}
path.count-line{fill:none;stroke:#ef6c00;stroke-width:1.5}
.marker{stroke:#c62828;stroke-width:1.5;stroke-dasharray:4 3}.marker-label{fill:#c62828;font-weight:600}
.recovery{fill:#ffb300}.recovery-label{fill:#6d4c00}
.tick{stroke:#8a94a6}.tick-label{fill:#5a6478}
`

// TimelineCSS is the style sheet of TimelineSVG's drawing.
func TimelineCSS() template.CSS { return template.CSS(timelineCSS) }

// TimelineSVG draws the timeline of a lab as the HTML report does: the
// swimlanes (steps, etcd members, lease holders, nodes, pods), fault
// markers and recovery spans, as one SVG element (style: TimelineCSS).
func TimelineSVG(l *Lab) (template.HTML, error) {
	pic := Timeline(l)
	var b strings.Builder
	if err := page.ExecuteTemplate(&b, "timeline", timelineView{Svg: drawTimeline(pic), Lanes: len(pic.Lanes), Markers: len(pic.Markers)}); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // the template escaped every text
}

type traceView struct {
	Deployment string
	Hops       int
	SVG        svg
}

// HTML writes the report of every lab in a JSON report as one page, in
// English.
func HTML(w io.Writer, jsonReport []byte) error { return HTMLIn(w, jsonReport, nil) }

// HTMLIn writes the report of every lab in a JSON report as one page, its
// headings and words in p's language (nil: English); the labs' own texts
// are in the language they were run in.
func HTMLIn(w io.Writer, jsonReport []byte, p *i18n.Printer) error {
	labs, err := Parse(jsonReport)
	if err != nil {
		return err
	}
	return HTMLOf(w, labs, p)
}

// HTMLOf writes the HTML page of labs, as read from a JSON report or
// straight from the runner, in p's language.
func HTMLOf(w io.Writer, labs []*Lab, p *i18n.Printer) error {
	var views []labView
	for _, l := range labs {
		pic := Timeline(l)
		v := labView{Lab: *l, TL: timelineView{Svg: drawTimeline(pic), Lanes: len(pic.Lanes), Markers: len(pic.Markers)}}
		for _, d := range l.Scheduling {
			v.Sched = append(v.Sched, schedulingView(d))
		}
		for _, t := range l.Traces {
			v.Traces = append(v.Traces, traceView{Deployment: t.Deployment, Hops: len(t.Hops), SVG: drawTrace(t)})
		}
		views = append(views, v)
	}
	// Names, messages and command output come from lab files and the
	// cluster: their control characters show escaped on the page.
	counts := map[string]int{}
	for _, v := range views {
		counts[string(v.Status)]++
	}
	var summary []string
	for _, st := range []string{"passed", "failed", "errored", "refused", "interrupted", "skipped"} {
		if n := counts[st]; n > 0 {
			summary = append(summary, p.Sprintf("%d %s", n, p.S(st)))
		}
	}
	if err := pageIn(p).Execute(safetext.NewWriter(w), pageView{Labs: views, Summary: strings.Join(summary, ", ")}); err != nil {
		return fmt.Errorf("render HTML report: %w", err)
	}
	return nil
}

// pages are the page's template in each language, cloned before anything
// executes the base (html/template clones only a template that never
// ran: TimelineSVG runs page's "timeline").
var pages = func() map[i18n.Lang]*template.Template {
	out := map[i18n.Lang]*template.Template{}
	for _, l := range i18n.Langs {
		p := i18n.NewPrinter(l)
		out[l] = template.Must(page.Clone()).Funcs(template.FuncMap{"t": func(s any) string { return p.S(fmt.Sprint(s)) }, "tf": p.Sprintf, "lang": func() string { return string(l) }})
	}
	return out
}()

// pageIn is the page's template writing in p's language.
func pageIn(p *i18n.Printer) *template.Template { return pages[p.Lang()] }

// TraceCSS styles the sequence diagrams of TraceHTML.
func TraceCSS() template.CSS {
	return `.actor{fill:#e8eaf6;stroke:#5c6bc0}.actor-label{font-weight:600}
.lifeline{stroke:#9fa8da;stroke-dasharray:3 3}
.hop{stroke:#283593;stroke-width:1.6;marker-end:url(#arrow)}.store{stroke:#78909c;stroke-dasharray:2 2;marker-end:url(#arrow)}
.watch{stroke:#00897b;stroke-dasharray:5 3;marker-end:url(#arrow)}`
}

// TraceHTML is the apply trace of one Deployment as the report draws it:
// a sequence diagram of every write behind it, from the audit log, each
// hop with the identity that made it, in p's language. The browser view
// draws a chosen Deployment's with it.
func TraceHTML(t Trace, p *i18n.Printer) (template.HTML, error) {
	var b strings.Builder
	v := traceView{Deployment: t.Deployment, Hops: len(t.Hops), SVG: drawTrace(t)}
	if err := pageIn(p).ExecuteTemplate(safetext.NewWriter(&b), "trace", v); err != nil {
		return "", fmt.Errorf("render the trace of %s: %w", t.Deployment, err)
	}
	return template.HTML(b.String()), nil
}

// SchedulingCSS styles the tables of SchedulingHTML.
func SchedulingCSS() template.CSS {
	return `table.scheduling{border-collapse:collapse;margin:8px 0 16px}table.scheduling td,table.scheduling th{border:1px solid #d8dde6;padding:3px 8px;text-align:right}
table.scheduling td:first-child,table.scheduling td.rejected{text-align:left}table.scheduling td.rejected{color:#b71c1c}table.scheduling tr.selected{background:#e8f5e9}`
}

// SchedulingHTML is one scheduling decision as the report draws it: a
// row per node (the Filter plugin that rejected it, or its scores times
// the weights and their total), the selected node marked, in p's
// language. The browser view draws the latest decisions with it.
func SchedulingHTML(d Decision, p *i18n.Printer) (template.HTML, error) {
	var b strings.Builder
	if err := pageIn(p).ExecuteTemplate(safetext.NewWriter(&b), "sched", schedulingView(d)); err != nil {
		return "", fmt.Errorf("render scheduling decision: %w", err)
	}
	return template.HTML(b.String()), nil
}

const (
	labelW = 190.0
	plotW  = 860.0
	laneH  = 20.0
	laneG  = 6.0
	top    = 34.0
)

func drawTimeline(p Picture) svg {
	x := func(t float64) float64 { return labelW + t/p.End*plotW }
	s := svg{W: labelW + plotW + 20}
	y := top
	group := ""
	for _, l := range p.Lanes {
		if l.Group != group && group != "" {
			y += laneG
		}
		group = l.Group
		s.Texts = append(s.Texts, text{X: labelW - 8, Y: y + laneH*0.7, Class: "lane-label", Text: l.Name, Anchor: "end"})
		s.Rects = append(s.Rects, rect{X: labelW, Y: y, W: plotW, H: laneH, Class: "lane " + l.Group})
		for _, g := range l.Segs {
			r := rect{X: x(g.At), Y: y + 2, W: math.Max(g.Len/p.End*plotW, 1), H: laneH - 4, Class: "seg " + g.Class,
				Title: fmt.Sprintf("%s: %s from %.2fs for %.2fs", l.Name, g.Label, g.At, g.Len)}
			if r.W > 7*float64(len(g.Label)) {
				r.Text = g.Label
			}
			s.Rects = append(s.Rects, r)
		}
		if len(l.Points) > 0 {
			var d strings.Builder
			scale := (laneH - 4) / math.Max(float64(l.Max), 1)
			for i, pt := range l.Points {
				px, py := x(pt[0]), y+laneH-2-pt[1]*scale
				if i == 0 {
					fmt.Fprintf(&d, "M%.1f,%.1f", px, py)
				} else {
					fmt.Fprintf(&d, " H%.1f V%.1f", px, py)
				}
			}
			s.Paths = append(s.Paths, d.String())
			s.Texts = append(s.Texts, text{X: labelW + plotW + 4, Y: y + laneH*0.7, Class: "count", Text: fmt.Sprint(l.Max)})
		}
		y += laneH + 2
	}
	lanesEnd := y
	step := niceStep(p.End)
	for t := 0.0; t <= p.End+1e-9; t += step {
		s.Lines = append(s.Lines, line{X1: x(t), Y1: lanesEnd, X2: x(t), Y2: lanesEnd + 4, Class: "tick"})
		s.Texts = append(s.Texts, text{X: x(t), Y: lanesEnd + 16, Class: "tick-label", Text: fmt.Sprintf("%gs", math.Round(t*1000)/1000), Anchor: "middle"})
	}
	y = lanesEnd + 22
	for _, sp := range p.Spans {
		s.Rects = append(s.Rects, rect{X: x(sp.At), Y: y, W: math.Max(sp.Len/p.End*plotW, 2), H: 12, Class: "recovery", Title: sp.Label})
		s.Texts = append(s.Texts, text{X: labelW - 8, Y: y + 10, Class: "lane-label", Text: "recovery", Anchor: "end"},
			text{X: x(sp.At) + 4, Y: y + 10, Class: "recovery-label", Text: sp.Label})
		y += 16
	}
	for _, m := range p.Markers {
		s.Lines = append(s.Lines, line{X1: x(m.At), Y1: top - 6, X2: x(m.At), Y2: lanesEnd, Class: "marker", Title: fmt.Sprintf("%.2fs %s", m.At, m.Label)})
		t := text{X: x(m.At) + 3, Y: top - 8, Class: "marker-label", Text: m.Label}
		if x(m.At) > labelW+plotW*0.7 {
			t.X, t.Anchor = x(m.At)-3, "end"
		}
		s.Texts = append(s.Texts, t)
	}
	s.H = y + 8
	return s
}

func niceStep(end float64) float64 {
	raw := end / 8
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// Sequence-diagram columns of the apply-to-Running trace.
var columns = []string{"user (kubectl)", "kube-apiserver", "etcd", "controllers", "kube-scheduler", "kubelet / node", "EndpointSlice"}

func column(actor string) int {
	switch {
	case strings.HasSuffix(actor, ":endpointslice-controller"):
		return 6
	case strings.HasPrefix(actor, "system:serviceaccount:kube-system:"):
		return 3
	case actor == "system:kube-scheduler":
		return 4
	case actor == "kubelab:kwok" || strings.HasPrefix(actor, "system:node:"):
		return 5
	}
	return 0
}

func drawTrace(t Trace) svg {
	const colW, head, rowH = 150.0, 40.0, 30.0
	cx := func(i int) float64 { return 80 + float64(i)*colW }
	s := svg{W: cx(len(columns)-1) + 100, H: head + rowH*float64(len(t.Hops)) + 30}
	for i, c := range columns {
		s.Rects = append(s.Rects, rect{X: cx(i) - 65, Y: 4, W: 130, H: 24, Class: "actor"})
		s.Texts = append(s.Texts, text{X: cx(i), Y: 21, Class: "actor-label", Text: c, Anchor: "middle"})
		s.Lines = append(s.Lines, line{X1: cx(i), Y1: 28, X2: cx(i), Y2: s.H - 4, Class: "lifeline"})
	}
	for i, h := range t.Hops {
		y := head + rowH*float64(i) + 14
		from, api, etcd := cx(column(h.Actor)), cx(1), cx(2)
		title := fmt.Sprintf("+%.3fs %s %s %s (%.1f ms)", h.After, h.Actor, h.Verb, h.Object, h.Latency*1000)
		s.Lines = append(s.Lines, line{X1: from, Y1: y, X2: api, Y2: y, Class: "hop " + h.Kind, Title: title})
		s.Lines = append(s.Lines, line{X1: api, Y1: y + 4, X2: etcd, Y2: y + 4, Class: "store", Title: "stored in etcd"})
		lx := math.Max(from, api) + 6
		anchor := "start"
		if from > api {
			lx, anchor = math.Min(from, api)+colW/2, "middle"
		}
		s.Texts = append(s.Texts, text{X: lx, Y: y - 4, Class: "hop-label", Text: fmt.Sprintf("+%.3fs %s %s (%.0f ms)", h.After, h.Verb, h.Object, h.Latency*1000), Anchor: anchor})
		// The next hop's writer learnt of this write through its watch.
		if i+1 < len(t.Hops) {
			if next := cx(column(t.Hops[i+1].Actor)); next != api {
				s.Lines = append(s.Lines, line{X1: api, Y1: y + 12, X2: next, Y2: y + 12, Class: "watch",
					Title: fmt.Sprintf("watch: %s sees %s", t.Hops[i+1].Actor, h.Object)})
			}
		}
	}
	return s
}
