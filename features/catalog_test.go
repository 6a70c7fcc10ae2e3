package features

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"kubelab.dev/kubelab/cluster"
)

var update = flag.Bool("update", false, "rewrite "+catalogFile+" from the step definitions")

// catalogFile is the committed step catalog.
const catalogFile = "STEPS.md"

func TestCatalog(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCatalog(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(catalogFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(catalogFile)
	if err != nil || !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("%s is stale or missing (%v); regenerate it with:\n\tgo test ./features -run TestCatalog -update", catalogFile, err)
	}
}

// TestCatalogExamples checks that every example of every phrase matches
// that phrase and no other (godog's strict mode fails ambiguous steps),
// and that every phrase is documented.
func TestCatalogExamples(t *testing.T) {
	for _, st := range Steps() {
		if st.Phrase == "" || st.Doc == "" || len(st.Examples) == 0 || st.Group == "" || st.Keyword == "" {
			t.Errorf("phrase %q lacks a group, keyword, doc or example", st.Phrase)
		}
		re := regexp.MustCompile(st.Pattern())
		for _, ex := range st.Examples {
			text := keywordRE.ReplaceAllString(ex, "")
			if !re.MatchString(text) {
				t.Errorf("example %q does not match its phrase %q (%s)", ex, st.Phrase, st.Pattern())
			}
			if m := matches(text); len(m) != 1 {
				var ps []string
				for _, s := range m {
					ps = append(ps, s.Phrase)
				}
				t.Errorf("example %q matches %d phrases: %s", ex, len(m), strings.Join(ps, "; "))
			}
		}
	}
}

func TestSuggest(t *testing.T) {
	for text, want := range map[string]string{
		"I kil the etcd leader":                        "I kill|stop|start|restart|pause|resume the etcd leader|scheduler leader|controller-manager leader",
		`I take the node "worker-1" down`:              `I take node "NODE" down`,
		"within 5s a new etcd leader gets elected":     "[within DURATION] a new etcd leader is elected",
		`the expression "raft.quorum" holds within 3m`: `the expression "EXPR" holds within DURATION`,
		`kubectl "get pods" should fail`:               `[within DURATION] kubectl "ARGS" succeeds|fails`,
		"a cluster with 3 etcd members":                "a lab cluster with COUNTS",
	} {
		if got := Suggest(text, 3); len(got) != 3 || got[0].Phrase != want {
			var ps []string
			for _, s := range got {
				ps = append(ps, s.Phrase)
			}
			t.Errorf("Suggest(%q) = %q, want %q first", text, ps, want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`get pods -o wide`:                              {"get", "pods", "-o", "wide"},
		`get --raw '/api/v1/x?watch=1&rv=${old}'`:       {"get", "--raw", "/api/v1/x?watch=1&rv=${old}"},
		`create cm x "--from-literal=a=b c" -o name`:    {"create", "cm", "x", "--from-literal=a=b c", "-o", "name"},
		`patch cm x -p '{"data": {"a": "it''s"}}'`:      {"patch", "cm", "x", "-p", `{"data": {"a": "its"}}`},
		`label node a\ b`:                               {"label", "node", "a b"},
		`get cm -o "jsonpath={.data.a}"`:                {"get", "cm", "-o", "jsonpath={.data.a}"},
		`  auth   can-i  list pods --as=system:x:y:z  `: {"auth", "can-i", "list", "pods", "--as=system:x:y:z"},
	} {
		got, err := splitArgs(in)
		if err != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`get 'pods`, `get "pods`, ``, `   `} {
		if _, err := splitArgs(bad); err == nil {
			t.Errorf("splitArgs(%q): want an error", bad)
		}
	}
}

func TestParseCountsAndTimings(t *testing.T) {
	var topo cluster.Topology
	if err := parseCounts("3 etcd members, 2 schedulers and 3 workers", &topo); err != nil {
		t.Fatal(err)
	}
	if err := parseCounts("2 controller-managers and 2 API servers", &topo); err != nil {
		t.Fatal(err)
	}
	if topo.Etcd != 3 || topo.Schedulers != 2 || topo.Workers != 3 || topo.ControllerManagers != 2 || topo.APIServers != 2 {
		t.Errorf("counts: got %+v", topo)
	}
	for _, bad := range []string{"three workers", "3 routers", "3"} {
		if err := parseCounts(bad, &topo); err == nil {
			t.Errorf("parseCounts(%q): want an error", bad)
		}
	}
	if err := parseTimings("lease duration 4s, renew deadline 3s and retry period 1s", &topo.Timings); err != nil {
		t.Fatal(err)
	}
	if err := parseTimings("node monitor grace period 8s and toleration seconds 10s", &topo.Timings); err != nil {
		t.Fatal(err)
	}
	tm := topo.Timings
	if tm.LeaseDuration.Seconds() != 4 || tm.RenewDeadline.Seconds() != 3 || tm.RetryPeriod.Seconds() != 1 ||
		tm.NodeMonitorGracePeriod.Seconds() != 8 || tm.TolerationSeconds.Seconds() != 10 {
		t.Errorf("timings: got %+v", tm)
	}
	for _, bad := range []string{"lease duration four", "lease duration -1s", "grace 8s"} {
		if err := parseTimings(bad, &topo.Timings); err == nil {
			t.Errorf("parseTimings(%q): want an error", bad)
		}
	}
}

func TestExpandAndUnquote(t *testing.T) {
	got, err := expand("rv=${old}&x=${old}", map[string]string{"old": "42"})
	if err != nil || got != "rv=42&x=42" {
		t.Errorf("expand = %q, %v", got, err)
	}
	if _, err := expand("${missing}", nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("expand of a missing name: %v", err)
	}
	if got := unquote(`pods(\"app=web\") \\ x`); got != `pods("app=web") \ x` {
		t.Errorf("unquote = %q", got)
	}
}

func TestDescriptionConvention(t *testing.T) {
	q, a, k, err := splitDescription("  Question: Why?\n  Really?\n\n  Model answer:\n    Because.\n\n    Indeed.\n")
	if err != nil || q != "Why?\nReally?" || a != "Because.\n\nIndeed." || k != "" {
		t.Errorf("splitDescription = %q, %q, %q, %v", q, a, k, err)
	}
	q, a, k, err = splitDescription("  Question: Why?\n\n  Model answer:\n    Because.\n\n  Key points:\n    - It is.\n      terms: because\n")
	if err != nil || q != "Why?" || a != "Because." || k != "\n  - It is.\n    terms: because" {
		t.Errorf("with key points: splitDescription = %q, %q, %q, %v", q, a, k, err)
	}
	for _, bad := range []string{"", "Why?\nModel answer: x", "Question: Why?", "Question: \nModel answer:\n"} {
		if _, _, _, err := splitDescription(bad); err == nil {
			t.Errorf("splitDescription(%q): want an error", bad)
		}
	}
}
