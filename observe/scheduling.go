package observe

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
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
	// Weights of the Score plugins in this profile.
	Weights map[string]int64 `json:"weights,omitempty" expr:"weights"`
	// Total maps node -> sum of score x weight, what the scheduler ranks
	// by. Empty when fewer than two nodes were feasible: the scheduler
	// does not score a single candidate.
	Total map[string]int64 `json:"total,omitempty" expr:"total"`
}

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

// ReadDecisions reads the decision logs at paths (a missing file has no
// decisions yet), oldest first.
func ReadDecisions(paths ...string) ([]Decision, error) {
	var out []Decision
	for _, p := range paths {
		ds, err := readDecisions(p)
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

func readDecisions(path string) ([]Decision, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read scheduling decisions: %w", err)
	}
	defer f.Close()
	var out []Decision
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var d Decision
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			// The scheduler may be writing the last line right now.
			continue
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read scheduling decisions %s: %w", path, err)
	}
	return out, nil
}

// LatestDecision returns the last decision about pod (namespace/name),
// or false when the scheduler has not tried it yet.
func LatestDecision(ds []Decision, pod string) (Decision, bool) {
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Pod == pod {
			return ds[i], true
		}
	}
	return Decision{}, false
}
