package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Running is a cluster that has live processes or running containers on
// this machine: what else shares the cores with a measurement.
type Running struct {
	// Backend is embedded or docker.
	Backend string
	// Name is the cluster's name.
	Name string
	// Where is the home (embedded) or the state directory (docker) the
	// cluster belongs to.
	Where string
	// Count is its live processes (embedded) or running containers
	// (docker).
	Count int
}

func (r Running) String() string {
	unit := map[bool]string{true: "process", false: "processes"}[r.Count == 1]
	if r.Backend == "docker" {
		unit = map[bool]string{true: "container", false: "containers"}[r.Count == 1]
	}
	return fmt.Sprintf("%s cluster %s of %s (%d %s)", r.Backend, r.Name, r.Where, r.Count, unit)
}

// Tally turns one Running per process or container (Count unset) into
// one per cluster with its count, sorted by backend, place and name.
func Tally(each []Running) []Running {
	count := map[Running]int{}
	for _, r := range each {
		r.Count = 0
		count[r]++
	}
	out := make([]Running, 0, len(count))
	for r, n := range count {
		r.Count = n
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Running) int {
		return cmp.Or(strings.Compare(a.Backend, b.Backend), strings.Compare(a.Where, b.Where), strings.Compare(a.Name, b.Name))
	})
	return out
}
