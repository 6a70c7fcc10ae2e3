package engine

import (
	"fmt"
	"regexp"
	"strings"

	"kubelab.dev/kubelab/internal/i18n"
)

// The shapes of the timeline's details and recoveries that carry words
// (run_timeline.go, run_recovery.go): the data keeps them in English, as
// the reports and pictures read them; these give them to a person in the
// printer's language.
var (
	detailShapes = []struct {
		re     *regexp.Regexp
		format string
	}{
		{regexp.MustCompile(`^(\S+) is leader$`), "%s is leader"},
		{regexp.MustCompile(`^term (\d+) -> (\d+)$`), "term %s -> %s"},
		{regexp.MustCompile(`^held by (\S+)$`), "held by %s"},
		{regexp.MustCompile(`^scheduled to (\S+)$`), "scheduled to %s"},
		{regexp.MustCompile(`^created \((\S*)\)$`), "created (%s)"},
		{regexp.MustCompile(`^(\d+) ready$`), "%s ready"},
		{regexp.MustCompile(`^all (\d+) ready again$`), "all %s ready again"},
		{regexp.MustCompile(`^new etcd leader \((\S+)\)$`), "new etcd leader (%s)"},
		{regexp.MustCompile(`^(\S+) lease moved \((\S+)\)$`), "%s lease moved (%s)"},
		{regexp.MustCompile(`^(\S+) endpoints whole again$`), "%s endpoints whole again"},
	}
	detailWords = map[string]bool{"no leader": true, "released": true, "created": true, "deleted": true, "terminating": true, "started": true,
		string(Passed): true, string(Failed): true, string(Skipped): true, string(Errored): true, string(Interrupted): true}
)

// DetailIn is the event's detail in p's language.
func DetailIn(p *i18n.Printer, e TimelineEvent) string { return wordsIn(p, e.Detail) }

// DescribeIn is the recovery's description in p's language.
func DescribeIn(p *i18n.Printer, r Recovery) string {
	if p.Lang() == i18n.EN || r.Describe == "" || r.Fault == "" {
		return r.Describe
	}
	return p.Sprintf("%s -> %s after %s", r.Fault, wordsIn(p, r.Event), r.After.Round(1e6))
}

func wordsIn(p *i18n.Printer, s string) string {
	if p.Lang() == i18n.EN {
		return s
	}
	if detailWords[s] {
		return p.S(s)
	}
	for _, sh := range detailShapes {
		if m := sh.re.FindStringSubmatch(s); m != nil {
			args := make([]any, len(m)-1)
			for i, a := range m[1:] {
				args[i] = a
			}
			return p.Sprintf(sh.format, args...)
		}
	}
	if before, after, ok := strings.Cut(s, " -> "); ok && !strings.Contains(before, " ") {
		return fmt.Sprintf("%s -> %s", before, after) // a phase change: Kubernetes' own words
	}
	return s
}
