package features

import (
	"regexp"
	"strings"

	"kubelab.dev/kubelab/cluster"
)

// observedCalls are the expression functions that read the cluster's
// observation: the apiservers' audit log and the scheduler's decisions.
var observedCalls = regexp.MustCompile(`\b(audit|trace|scheduling)\(`)

// observeNeeds is the observation a scenario's steps read, so its cluster
// records only that: a step needs what its own text calls (the expression
// steps) or what the phrase it matches is documented to evaluate (the
// scheduler's steps evaluate scheduling()).
func observeNeeds(texts []string) map[cluster.Capability]string {
	steps := catalog()
	res := make([]*regexp.Regexp, len(steps))
	for i, st := range steps {
		res[i] = regexp.MustCompile(st.re)
	}
	out := map[cluster.Capability]string{}
	for _, text := range texts {
		calls := observedCalls.FindAllStringSubmatch(text, -1)
		for i, st := range steps {
			if res[i].MatchString(text) {
				calls = append(calls, observedCalls.FindAllStringSubmatch(st.Doc, -1)...)
				break
			}
		}
		for _, c := range calls {
			k := cluster.CapAuditLog
			if c[1] == "scheduling" {
				k = cluster.CapSchedulingLog
			}
			if _, seen := out[k]; !seen {
				out[k] = c[1] + "() in step \"" + strings.TrimSpace(text) + "\""
			}
		}
	}
	return out
}
