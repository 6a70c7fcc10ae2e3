package observe

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"
)

// Decision is one scheduling cycle of one pod as the real kube-scheduler
// made it, recorded by kubelab's wrappers around the scheduler's own
// Filter and Score plugins (the scheduler decides; the wrappers only
// write down what each plugin returned). One JSON line per cycle.
type Decision struct {
	// Time the cycle ended.
	Time time.Time `json:"time" expr:"time"`
	// Scheduler is the kube-scheduler that ran the cycle.
	Scheduler string `json:"scheduler" expr:"scheduler"`
	// Profile is the scheduler profile (the pod's schedulerName).
	Profile string `json:"profile" expr:"profile"`
	// Pod is namespace/name; UID tells apart pods reusing a name.
	Pod string `json:"pod" expr:"pod"`
	UID string `json:"uid" expr:"uid"`
	// Result is "Scheduled" or "Unschedulable".
	Result string `json:"result" expr:"result"`
	// Selected is the node the pod was bound to ("" when unschedulable).
	Selected string `json:"selected,omitempty" expr:"selected"`
	// Filters are the Filter plugins of the profile, in the order they run.
	Filters []string `json:"filters" expr:"filters"`
	// Filtered maps each rejected node to the first plugin that rejected it
	// (the scheduler stops at the first).
	Filtered map[string]Rejection `json:"filtered" expr:"filtered"`
	// Feasible are the nodes every Filter plugin accepted.
	Feasible []string `json:"feasible" expr:"feasible"`
	// Raw maps node -> Score plugin -> what Score returned.
	Raw map[string]map[string]int64 `json:"raw,omitempty" expr:"raw"`
	// Scores maps node -> Score plugin -> the score after NormalizeScore
	// (0-100), before the weight.
	Scores map[string]map[string]int64 `json:"scores,omitempty" expr:"scores"`
	// Unitemized counts the scored nodes whose per-plugin scores (Raw,
	// Scores) were not written down: beyond DetailedNodes, only the best
	// by total and the selected node are itemized. Total still has every
	// scored node.
	Unitemized int `json:"unitemized,omitempty" expr:"unitemized"`
	// Weights of the Score plugins in this profile.
	Weights map[string]int64 `json:"weights,omitempty" expr:"weights"`
	// Total maps node -> sum of score x weight, what the scheduler ranks
	// by. Empty when fewer than two nodes were feasible: the scheduler
	// does not score a single candidate.
	Total map[string]int64 `json:"total,omitempty" expr:"total"`
}

// ExtenderPlugin is how a Decision names a scheduler extender among the
// plugins (in Filters, Filtered, Raw, Scores and Weights): its raw scores
// are 0-10, its normalized ones x10, as the scheduler scales them.
const ExtenderPlugin = "Extender"

// DetailedNodes is how many scored nodes a decision itemizes plugin by
// plugin: the best by total, and the selected node. Writing all of them
// down cost 40% of the pods scheduled per second at 1,000 nodes (about
// 120 KB per decision); a learner reads the winner and the runners-up.
const DetailedNodes = 20

// Rejection is why one node was filtered out.
type Rejection struct {
	// Plugin that rejected the node, e.g. TaintToleration.
	Plugin string `json:"plugin" expr:"plugin"`
	// Code is the status code: Unschedulable, UnschedulableAndUnresolvable.
	Code string `json:"code" expr:"code"`
	// Reason is the plugin's message, e.g. "node(s) had untolerated taint(s)".
	Reason string `json:"reason" expr:"reason"`
}

// Best returns the nodes with the highest total, sorted (more than one
// on a tie, which the scheduler breaks at random).
func (d Decision) Best() []string {
	var best []string
	var top int64 = -1
	for n, s := range d.Total {
		switch {
		case s > top:
			top, best = s, []string{n}
		case s == top:
			best = append(best, n)
		}
	}
	sort.Strings(best)
	return best
}

// DecisionLog follows one scheduler's decision log: each Update reads
// only what was appended since the last one (a partly written last line
// waits for the next), and keeps the latest decision per pod, so asking
// about one pod on a cluster with thousands does not re-read them all.
type DecisionLog struct {
	path   string
	offset int64
	latest map[string]Decision
}

// NewDecisionLog follows the log at path (which may not exist yet).
func NewDecisionLog(path string) *DecisionLog {
	return &DecisionLog{path: path, latest: map[string]Decision{}}
}

// Update reads the lines appended since the last call.
func (l *DecisionLog) Update() error {
	f, err := os.Open(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read scheduling decisions: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return fmt.Errorf("read scheduling decisions %s: %w", l.path, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			// EOF: a line without its newline is still being written.
			return nil
		}
		l.offset += int64(len(line))
		var d Decision
		if json.Unmarshal(line, &d) == nil {
			l.latest[d.Pod] = d
		}
	}
}

// Latest is the last decision about pod (namespace/name).
func (l *DecisionLog) Latest(pod string) (Decision, bool) {
	d, ok := l.latest[pod]
	return d, ok
}

// Each calls f with the latest decision about every pod read so far.
func (l *DecisionLog) Each(f func(Decision)) {
	for _, d := range l.latest {
		f(d)
	}
}
