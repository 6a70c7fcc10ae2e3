package features

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"kubelab.dev/kubelab/cluster"
)

// Sub-patterns shared by the step phrases.
const (
	// quoted is a double-quoted argument; \" and \\ escape inside it.
	quoted = `"((?:[^"\\]|\\.)*)"`
	// duration is a Go duration such as 5s or 1m30s.
	duration = `(\d[0-9a-zµ.]*)`
	// within is the optional "within DURATION " prefix of a check.
	within = `(?:within ` + duration + ` )?`
)

// unquote undoes the escapes of a quoted argument: \" and \\.
func unquote(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseDuration reads a Go duration argument.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("duration %q: want a positive Go duration such as 5s or 1m30s", s)
	}
	return d, nil
}

// listItems splits "a, b and c" into its items.
func listItems(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		for _, item := range strings.Split(part, " and ") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// countNouns maps the nouns of "a lab cluster with ..." to topology fields.
var countNouns = []struct {
	re    *regexp.Regexp
	field func(*cluster.Topology) *int
}{
	{regexp.MustCompile(`^etcd(?: members?| nodes?)?$`), func(t *cluster.Topology) *int { return &t.Etcd }},
	{regexp.MustCompile(`^(?:kube-)?api ?servers?$`), func(t *cluster.Topology) *int { return &t.APIServers }},
	{regexp.MustCompile(`^(?:kube-)?schedulers?$`), func(t *cluster.Topology) *int { return &t.Schedulers }},
	{regexp.MustCompile(`^(?:kube-)?controller[- ]managers?$`), func(t *cluster.Topology) *int { return &t.ControllerManagers }},
	{regexp.MustCompile(`^(?:workers?|worker nodes?|nodes?)$`), func(t *cluster.Topology) *int { return &t.Workers }},
}

// parseCounts reads "3 etcd members, 2 schedulers and 3 workers" into t.
func parseCounts(s string, t *cluster.Topology) error {
	items := listItems(s)
	if len(items) == 0 {
		return fmt.Errorf("no component counts in %q", s)
	}
	for _, item := range items {
		num, noun, ok := strings.Cut(item, " ")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("%q: want a count and a component, e.g. \"3 etcd members\"", item)
		}
		found := false
		for _, c := range countNouns {
			if c.re.MatchString(strings.ToLower(noun)) {
				*c.field(t) = n
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%q: unknown component %q (want etcd members, apiservers, schedulers, controller-managers or workers)", item, noun)
		}
	}
	return nil
}

// timingNames maps the names of timings in steps to topology fields.
var timingNames = []struct {
	name  string
	field func(*cluster.Timings) *cluster.Duration
}{
	{"lease duration", func(t *cluster.Timings) *cluster.Duration { return &t.LeaseDuration }},
	{"renew deadline", func(t *cluster.Timings) *cluster.Duration { return &t.RenewDeadline }},
	{"retry period", func(t *cluster.Timings) *cluster.Duration { return &t.RetryPeriod }},
	{"node monitor grace period", func(t *cluster.Timings) *cluster.Duration { return &t.NodeMonitorGracePeriod }},
	{"node lease duration", func(t *cluster.Timings) *cluster.Duration { return &t.NodeLeaseDuration }},
	{"toleration seconds", func(t *cluster.Timings) *cluster.Duration { return &t.TolerationSeconds }},
	{"etcd compaction interval", func(t *cluster.Timings) *cluster.Duration { return &t.EtcdCompactionInterval }},
}

// timingPattern matches a step that sets timings.
func timingPattern() string {
	var names []string
	for _, t := range timingNames {
		names = append(names, t.name)
	}
	return `^((?:` + strings.Join(names, "|") + `) .+)$`
}

// parseTimings reads "lease duration 4s, renew deadline 3s and retry
// period 1s" into t.
func parseTimings(s string, t *cluster.Timings) error {
	for _, item := range listItems(s) {
		found := false
		for _, tn := range timingNames {
			rest, ok := strings.CutPrefix(item, tn.name+" ")
			if !ok {
				continue
			}
			rest = strings.TrimPrefix(rest, "of ")
			d, err := parseDuration(strings.TrimSpace(rest))
			if err != nil {
				return fmt.Errorf("%s: %w", tn.name, err)
			}
			tn.field(t).Duration = d
			found = true
			break
		}
		if !found {
			var names []string
			for _, tn := range timingNames {
				names = append(names, tn.name)
			}
			return fmt.Errorf("%q: unknown timing (want one of: %s)", item, strings.Join(names, ", "))
		}
	}
	return nil
}

// parseTaint reads key[=value]:Effect.
func parseTaint(s string) (key, value, effect string, err error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", "", fmt.Errorf("taint %q: want key[=value]:Effect, e.g. dedicated=infra:NoSchedule", s)
	}
	key, value, _ = strings.Cut(kv, "=")
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return "", "", "", fmt.Errorf("taint %q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	if key == "" {
		return "", "", "", fmt.Errorf("taint %q: empty key", s)
	}
	return key, value, effect, nil
}

// splitArgs splits a command line into arguments as a shell would:
// whitespace separates them; single quotes keep everything literal; double
// quotes keep spaces; a backslash escapes the next character outside single
// quotes. There is no expansion.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'':
			if c == '\'' {
				q = 0
			} else {
				cur.WriteByte(c)
			}
		case q == '"':
			switch {
			case c == '"':
				q = 0
			case c == '\\' && i+1 < len(s):
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, inArg = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inArg = true
		case c == ' ' || c == '\t' || c == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", q, s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("no arguments in %q", s)
	}
	return args, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellCommand is a script line that runs program (a variable such as
// $KUBECTL) with argv, each argument quoted.
func shellCommand(program string, argv []string) string {
	var b strings.Builder
	b.WriteString(program)
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${name} with the values saved by "I save the output as".
func expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no saved output named %s (save one first with: I save the output as \"%s\")", strings.Join(missing, ", "), missing[0])
	}
	return out, nil
}

// slug turns a feature file name or title into a DNS label.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 30 {
		out = strings.Trim(out[:30], "-")
	}
	if out == "" {
		out = "drill"
	}
	return out
}
