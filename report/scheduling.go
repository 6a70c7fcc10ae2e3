package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"kubelab.dev/kubelab/observe"
)

// schedView is one pod's score table: a row per node, a column per Score
// plugin (normalized score x weight), the total, the selected node marked.
type schedView struct {
	Pod, Profile, Result, Selected string
	Plugins                        []string
	Rows                           []schedRow
	// Span is the width of the plugin columns (one when nothing was scored).
	Span int
	// Extender: a scheduler extender filtered or scored in this cycle.
	Extender bool
}

type schedRow struct {
	Node     string
	Rejected string // "Plugin: reason", empty for a feasible node
	Cells    []string
	Total    string
	Selected bool
	// Only: the single feasible node, bound without scoring.
	Only bool
}

func schedulingView(d Decision) schedView {
	v := schedView{Pod: d.Pod, Profile: d.Profile, Result: d.Result, Selected: d.Selected}
	plugins := map[string]bool{}
	for _, scores := range d.Scores {
		for p := range scores {
			plugins[p] = true
		}
	}
	v.Plugins = slices.SortedFunc(maps.Keys(plugins), func(a, b string) int {
		return cmp.Or(cmp.Compare(d.Weights[b], d.Weights[a]), cmp.Compare(a, b))
	})
	v.Span = max(1, len(v.Plugins))
	_, v.Extender = d.Weights[observe.ExtenderPlugin]
	for _, r := range d.Filtered {
		v.Extender = v.Extender || r.Plugin == observe.ExtenderPlugin
	}
	nodes := map[string]bool{}
	for n := range d.Filtered {
		nodes[n] = true
	}
	for _, n := range d.Feasible {
		nodes[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		r := schedRow{Node: n, Selected: n == d.Selected}
		if rej, ok := d.Filtered[n]; ok {
			r.Rejected = rej.Plugin + ": " + rej.Reason
		} else if len(v.Plugins) == 0 {
			// The scheduler binds a single feasible node without scoring.
			r.Only = true
		} else {
			for _, p := range v.Plugins {
				s, ok := d.Scores[n][p]
				if !ok {
					r.Cells = append(r.Cells, "")
					continue
				}
				r.Cells = append(r.Cells, fmt.Sprintf("%d × %d", s, d.Weights[p]))
			}
			if t, ok := d.Total[n]; ok {
				r.Total = fmt.Sprint(t)
			}
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}
