package assertions

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics implements View: the Prometheus text the component serves at
// /metrics, read at each call (cluster.Cluster.Metrics).
func (l *Live) Metrics(ctx context.Context, component string) ([]byte, error) {
	return l.c.Metrics(ctx, component)
}

// MetricValue is what metric() gives: the value of the metric called name
// in the Prometheus text of component, summed over its series whose
// labels include every pair of labels (values compared as text). A
// histogram's or summary's NAME_count and NAME_sum are its observations'
// count and sum, NAME_bucket its cumulative count at the bound the "le"
// label names. A metric the text has but no series of which matches is
// 0 (a counter that never counted those labels); a name the text lacks
// is an error that names the nearest ones, as the component may not have
// recorded it yet or it may be misspelt.
func MetricValue(text []byte, component, name string, labels map[string]any) (float64, error) {
	fams, err := ParseMetrics(text, component)
	if err != nil {
		return 0, err
	}
	return fams.Value(component, name, labels)
}

// MetricFamilies are a component's metrics, parsed once, by name.
type MetricFamilies map[string]*dto.MetricFamily

// ParseMetrics parses the Prometheus text of component.
func ParseMetrics(text []byte, component string) (MetricFamilies, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", component, err)
	}
	return fams, nil
}

// Value is MetricValue over metrics already parsed.
func (fams MetricFamilies) Value(component, name string, labels map[string]any) (float64, error) {
	fam, part := fams[name], ""
	if fam == nil {
		for _, suffix := range []string{"_count", "_sum", "_bucket"} {
			base, ok := strings.CutSuffix(name, suffix)
			if f := fams[base]; ok && f != nil && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
				fam, part = f, suffix
			}
		}
	}
	if fam == nil {
		return 0, fmt.Errorf("%s has no metric %s, or has not recorded it yet%s", component, name, nearestMetrics(fams, name))
	}
	want := map[string]string{}
	for k, v := range labels {
		want[k] = fmt.Sprint(v)
	}
	le, byBound := want["le"]
	if part == "_bucket" {
		if !byBound {
			return 0, fmt.Errorf("%s of %s: say which bucket with the label le, e.g. {\"le\": \"0.1\"}", name, component)
		}
		delete(want, "le")
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		v, err := sampleValue(fam.GetType(), m, part, le)
		if err != nil {
			return 0, fmt.Errorf("%s of %s: %w", name, component, err)
		}
		sum += v
	}
	return sum, nil
}

// hasLabels says whether m has every label of want, with its value.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// sampleValue is one series' value: part "" for a counter, gauge or
// untyped metric, _count, _sum or _bucket (at bound le) of a histogram
// or summary.
func sampleValue(t dto.MetricType, m *dto.Metric, part, le string) (float64, error) {
	switch {
	case part == "" && m.GetCounter() != nil:
		return m.GetCounter().GetValue(), nil
	case part == "" && m.GetGauge() != nil:
		return m.GetGauge().GetValue(), nil
	case part == "" && m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), nil
	case part == "":
		return 0, fmt.Errorf("a %s: ask for its _count or _sum", strings.ToLower(t.String()))
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		switch part {
		case "_count":
			return float64(h.GetSampleCount()), nil
		case "_sum":
			return h.GetSampleSum(), nil
		}
		for _, b := range h.GetBucket() {
			if model.FloatString(b.GetUpperBound()).String() == le || fmt.Sprint(b.GetUpperBound()) == le {
				return float64(b.GetCumulativeCount()), nil
			}
		}
		if le == "+Inf" {
			return float64(h.GetSampleCount()), nil
		}
		var bounds []string
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				bounds = append(bounds, fmt.Sprint(b.GetUpperBound()))
			}
		}
		return 0, fmt.Errorf("no bucket le=%q; its buckets: %s, +Inf", le, strings.Join(bounds, ", "))
	case m.GetSummary() != nil && part != "_bucket":
		if part == "_count" {
			return float64(m.GetSummary().GetSampleCount()), nil
		}
		return m.GetSummary().GetSampleSum(), nil
	}
	return 0, fmt.Errorf("a %s has no %s", strings.ToLower(t.String()), part)
}

// nearestMetrics is ` (did you mean "x"?)` when a metric of fams is a few
// edits from name, or "".
func nearestMetrics(fams MetricFamilies, name string) string {
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	slices.Sort(names)
	best, bestDist := "", max(3, len(name)/8)+1
	for _, n := range names {
		if d := levenshtein.ComputeDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
