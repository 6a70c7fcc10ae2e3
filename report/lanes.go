package report

import (
	"regexp"
	"sort"
	"strings"
)

// Seg is a span of a lane: from At for Len seconds, in a state.
type Seg struct {
	At, Len float64
	// Class is the state: leader, follower, down, held, ready, notready,
	// passed, failed...
	Class string
	// Label is shown in the span and in its tooltip.
	Label string
}

// Lane is one row of the timeline.
type Lane struct {
	Group string // etcd, lease, node, step, pods
	Name  string
	Segs  []Seg
	// Points is a step line of counts (pods Running) when set.
	Points [][2]float64
	Max    int
}

// Marker is a fault at a time.
type Marker struct {
	At    float64
	Label string
}

// Span is a recovery: from a fault to what it caused.
type Span struct {
	At, Len float64
	Label   string
}

// Picture is the timeline of one lab, ready to draw.
type Picture struct {
	End     float64
	Lanes   []Lane
	Markers []Marker
	Spans   []Span
}

var etcdMember = regexp.MustCompile(`\betcd-\d+\b`)

// Timeline turns a lab's timeline events into lanes, fault markers and
// recovery spans.
func Timeline(l *Lab) Picture {
	p := Picture{End: max(0.001, l.Now.Seconds())}
	for _, e := range l.Timeline {
		p.End = max(p.End, e.At.Seconds())
	}
	for _, r := range l.Recovery {
		p.End = max(p.End, (r.FaultAt + r.After).Seconds())
	}
	p.Lanes = append(p.Lanes, stepLane(l.Timeline, p.End))
	p.Lanes = append(p.Lanes, etcdLanes(l.Timeline, p.End)...)
	p.Lanes = append(p.Lanes, leaseLanes(l.Timeline, p.End)...)
	p.Lanes = append(p.Lanes, nodeLanes(l.Timeline, p.End)...)
	if pods := podLane(l.Timeline, p.End); pods != nil {
		p.Lanes = append(p.Lanes, *pods)
	}
	for _, e := range l.Timeline {
		if e.Kind != "fault" {
			continue
		}
		// Faults a step applies at once share one marker.
		if n := len(p.Markers); n > 0 && e.At.Seconds()-p.Markers[n-1].At < p.End/100 && strings.HasPrefix(p.Markers[n-1].Label, e.Subject+" ") {
			p.Markers[n-1].Label += ", " + e.Detail
			continue
		}
		p.Markers = append(p.Markers, Marker{At: e.At.Seconds(), Label: e.Subject + " " + e.Detail})
	}
	for _, r := range l.Recovery {
		p.Spans = append(p.Spans, Span{At: r.FaultAt.Seconds(), Len: r.After.Seconds(), Label: r.Describe})
	}
	return p
}

// states builds segments from (time, state, label) changes up to end.
type change struct {
	at           float64
	class, label string
}

func segs(cs []change, end float64) []Seg {
	// A change to the state it already was in is no change.
	var merged []change
	for _, c := range cs {
		if n := len(merged); n > 0 && merged[n-1].class == c.class && merged[n-1].label == c.label {
			continue
		}
		merged = append(merged, c)
	}
	cs = merged
	var out []Seg
	for i, c := range cs {
		next := end
		if i+1 < len(cs) {
			next = cs[i+1].at
		}
		if c.class == "" || next <= c.at {
			continue
		}
		out = append(out, Seg{At: c.at, Len: next - c.at, Class: c.class, Label: c.label})
	}
	return out
}

func stepLane(tl []Event, end float64) Lane {
	lane := Lane{Group: "step", Name: "steps"}
	open := map[string]float64{}
	for _, e := range tl {
		if e.Kind != "step" {
			continue
		}
		if e.Detail == "started" {
			open[e.Subject] = e.At.Seconds()
			continue
		}
		if at, ok := open[e.Subject]; ok {
			lane.Segs = append(lane.Segs, Seg{At: at, Len: max(e.At.Seconds()-at, 0), Class: e.Detail, Label: e.Subject})
			delete(open, e.Subject)
		}
	}
	for name, at := range open {
		lane.Segs = append(lane.Segs, Seg{At: at, Len: end - at, Class: "running", Label: name})
	}
	sort.Slice(lane.Segs, func(i, j int) bool { return lane.Segs[i].At < lane.Segs[j].At })
	return lane
}

// etcdLanes: one lane per member seen, leader / follower / down.
func etcdLanes(tl []Event, end float64) []Lane {
	members := map[string]bool{}
	for _, e := range tl {
		if e.Kind == "etcd-leader" || e.Kind == "fault" {
			for _, m := range etcdMember.FindAllString(e.Detail, -1) {
				members[m] = true
			}
		}
	}
	names := sortedKeys(members)
	var lanes []Lane
	for _, m := range names {
		leader, down := false, false
		cs := []change{{0, "follower", "follower"}}
		state := func(at float64) {
			switch {
			case down:
				cs = append(cs, change{at, "down", "down"})
			case leader:
				cs = append(cs, change{at, "leader", "leader"})
			default:
				cs = append(cs, change{at, "follower", "follower"})
			}
		}
		for _, e := range tl {
			switch {
			case e.Kind == "etcd-leader":
				leader = strings.HasPrefix(e.Detail, m+" ")
				state(e.At.Seconds())
			case e.Kind == "etcd-term" && leader:
				cs = append(cs, change{e.At.Seconds(), "leader", "leader, " + e.Detail})
			case e.Kind == "fault" && faultHits(e.Detail, m):
				down = isDownAction(e.Subject)
				state(e.At.Seconds())
			}
		}
		lanes = append(lanes, Lane{Group: "etcd", Name: m, Segs: segs(cs, end)})
	}
	return lanes
}

func faultHits(detail, name string) bool {
	target := detail
	if _, after, ok := strings.Cut(detail, "="); ok {
		target = after
	}
	return target == name
}

func isDownAction(a string) bool {
	return a == "kill" || a == "stop" || a == "pause" || a == "partition"
}

// leaseLanes: one lane per leader-election lease, by holder.
func leaseLanes(tl []Event, end float64) []Lane {
	byLease := map[string][]change{}
	for _, e := range tl {
		if e.Kind != "lease" {
			continue
		}
		holder, ok := strings.CutPrefix(e.Detail, "held by ")
		c := change{e.At.Seconds(), "held", holder}
		if !ok {
			c = change{e.At.Seconds(), "released", e.Detail}
		}
		byLease[e.Subject] = append(byLease[e.Subject], c)
	}
	var lanes []Lane
	for _, name := range sortedKeys(byLease) {
		lanes = append(lanes, Lane{Group: "lease", Name: name, Segs: segs(byLease[name], end)})
	}
	return lanes
}

// nodeLanes: one lane per node whose Ready status changed (Ready before).
func nodeLanes(tl []Event, end float64) []Lane {
	byNode := map[string][]change{}
	for _, e := range tl {
		if e.Kind != "node" {
			continue
		}
		if _, seen := byNode[e.Subject]; !seen {
			byNode[e.Subject] = []change{{0, "ready", "Ready"}}
		}
		c := change{e.At.Seconds(), "notready", e.Detail}
		if e.Detail == "Ready=True" {
			c = change{e.At.Seconds(), "ready", "Ready"}
		}
		byNode[e.Subject] = append(byNode[e.Subject], c)
	}
	var lanes []Lane
	for _, name := range sortedKeys(byNode) {
		lanes = append(lanes, Lane{Group: "node", Name: name, Segs: segs(byNode[name], end)})
	}
	return lanes
}

var phases = []string{"Pending", "Running", "Succeeded", "Failed"}

// podLane counts Running pods over time (nil when no pod changed).
func podLane(tl []Event, end float64) *Lane {
	phase := map[string]string{}
	lane := Lane{Group: "pods", Name: "pods Running"}
	count := func() int {
		n := 0
		for _, p := range phase {
			if p == "Running" {
				n++
			}
		}
		return n
	}
	seen := false
	for _, e := range tl {
		if e.Kind != "pod" {
			continue
		}
		seen = true
		switch {
		case e.Detail == "deleted" || e.Detail == "terminating":
			delete(phase, e.Subject)
		default:
			for _, ph := range phases {
				if strings.Contains(e.Detail, ph) {
					phase[e.Subject] = ph
				}
			}
		}
		n := count()
		lane.Points = append(lane.Points, [2]float64{e.At.Seconds(), float64(n)})
		lane.Max = max(lane.Max, n)
	}
	if !seen {
		return nil
	}
	lane.Points = append(lane.Points, [2]float64{end, float64(count())})
	return &lane
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
