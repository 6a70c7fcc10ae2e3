package assertions

import (
	"context"
	"fmt"
	"maps"
	"slices"

	obs "kubelab.dev/kubelab/observe"
	"kubelab.dev/kubelab/report"
)

// Scheduling is the real kube-scheduler's last decision about one pod,
// plugin by plugin: see observe.Decision. In expressions:
// .selected, .filtered["worker-1"].plugin and .reason,
// .scores["worker-2"]["NodeResourcesFit"] (normalized, 0-100),
// .raw[node][plugin], .weights[plugin], .total[node] (sum of score x
// weight), .best (the nodes with the highest total), .feasible, .result,
// .unitemized (scored nodes beyond the 20 best whose per-plugin scores
// were not written down; .total has them all).
//
// It is the report's Decision: a report shows the decisions expressions
// asked about as they were.
type Scheduling = report.Decision

// Scheduling implements View: it reads every scheduler's decision log
// (the leader writes; a former leader's decisions are kept) and returns
// the latest about namespace/name.
func (l *Live) Scheduling(_ context.Context, namespace, name string) (Scheduling, error) {
	l.remember(namespace + "/" + name)
	return l.decision(namespace + "/" + name)
}

func (l *Live) remember(pod string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.asked, pod) {
		l.asked = append(l.asked, pod)
	}
}

// AskedScheduling returns the latest decision about every pod an
// expression asked scheduling() about, for reports.
func (l *Live) AskedScheduling() []Scheduling {
	l.mu.Lock()
	asked := slices.Clone(l.asked)
	l.mu.Unlock()
	var out []Scheduling
	for _, p := range asked {
		if d, err := l.decision(p); err == nil && d.Found {
			out = append(out, d)
		}
	}
	return out
}

// RecentScheduling returns the scheduler's latest decisions, newest
// first, at most n (one per pod: its latest cycle, from whichever
// scheduler ran it), for the live view; nil when the schedulers do not
// record.
func (l *Live) RecentScheduling(n int) []Scheduling {
	l.schedMu.Lock()
	defer l.schedMu.Unlock()
	l.openSchedulingLogs()
	latest := map[string]obs.Decision{}
	for _, name := range slices.Sorted(maps.Keys(l.sched)) {
		dl := l.sched[name]
		if dl.Update() != nil {
			continue
		}
		dl.Each(func(d obs.Decision) {
			if prev, ok := latest[d.Pod]; !ok || d.Time.After(prev.Time) {
				d.Scheduler = name
				latest[d.Pod] = d
			}
		})
	}
	ds := slices.Collect(maps.Values(latest))
	slices.SortFunc(ds, func(a, b obs.Decision) int { return b.Time.Compare(a.Time) })
	var out []Scheduling
	for _, d := range ds[:min(n, len(ds))] {
		out = append(out, Scheduling{Decision: d, Best: d.Best(), Found: true})
	}
	return out
}

// openSchedulingLogs opens the decision log of every scheduler, once:
// the schedulers and their logs are fixed for the cluster's life. The
// caller holds schedMu.
func (l *Live) openSchedulingLogs() {
	if l.sched != nil {
		return
	}
	l.sched = map[string]*obs.DecisionLog{}
	for n, path := range l.c.Access().SchedulingLogs {
		l.sched[n] = obs.NewDecisionLog(path)
	}
}

func (l *Live) decision(pod string) (Scheduling, error) {
	l.schedMu.Lock()
	defer l.schedMu.Unlock()
	l.openSchedulingLogs()
	if len(l.sched) == 0 {
		return Scheduling{}, fmt.Errorf("scheduling(%q): this cluster's schedulers do not record their decisions", pod)
	}
	var best obs.Decision
	found := false
	for _, n := range slices.Sorted(maps.Keys(l.sched)) {
		dl := l.sched[n]
		if err := dl.Update(); err != nil {
			return Scheduling{}, err
		}
		// A scheduler that lost its lease stops writing; the newest
		// decision, from whichever scheduler, is the one that holds.
		if d, ok := dl.Latest(pod); ok && (!found || d.Time.After(best.Time)) {
			best, found = d, true
			best.Scheduler = n
		}
	}
	if !found {
		return Scheduling{}, nil
	}
	return Scheduling{Decision: best, Best: best.Best(), Found: true}, nil
}
