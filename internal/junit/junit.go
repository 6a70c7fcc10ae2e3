// Package junit reads the JUnit report of a ginkgo run (the upstream
// conformance suite's) into counts by SIG and the failures and skips with
// their first line, for hack/conformance.sh's summary and its test.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Counts are the specs of one SIG, or of the whole run.
type Counts struct{ Passed, Failed, Skipped int }

// Spec is one spec that did not pass.
type Spec struct {
	Name    string  // the spec's full text, without ginkgo's "[It]" and labels
	Seconds float64 // how long it ran
	First   string  // the first line of its failure or skip message
}

// Summary is a run's result.
type Summary struct {
	BySIG    map[string]*Counts // "apps", "network", ...; "other" when none
	Total    Counts
	Passed   []string
	Failures []Spec
	Skips    []Spec // specs that skipped themselves while running, with why
}

type testsuites struct {
	Suites []struct {
		Cases []testcase `xml:"testcase"`
	} `xml:"testsuite"`
}

type testcase struct {
	Name    string   `xml:"name,attr"`
	Status  string   `xml:"status,attr"`
	Time    float64  `xml:"time,attr"`
	Failure *message `xml:"failure"`
	Error   *message `xml:"error"`
	Skipped *message `xml:"skipped"`
}

type message struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

var sigRE = regexp.MustCompile(`\[sig-([a-z0-9-]+)\]`)

// Read summarises the JUnit files at paths. A spec found in several
// counts once, with its result in the last file that ran it: a run of
// the specs that failed, given after the full run, updates it.
func Read(paths ...string) (Summary, error) {
	var order []string
	last := map[string]testcase{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return Summary{}, err
		}
		var r testsuites
		if err := xml.Unmarshal(b, &r); err != nil {
			return Summary{}, fmt.Errorf("%s: %w", path, err)
		}
		for _, suite := range r.Suites {
			for _, c := range suite.Cases {
				// Suite-level nodes ([SynchronizedBeforeSuite], ...) and
				// specs the focus left out are not specs of this run.
				if !strings.HasPrefix(c.Name, "[It]") || filteredOut(c) {
					continue
				}
				if _, ok := last[c.Name]; !ok {
					order = append(order, c.Name)
				}
				last[c.Name] = c
			}
		}
	}
	s := Summary{BySIG: map[string]*Counts{}}
	for _, name := range order {
		s.add(last[name])
	}
	return s, nil
}

func (s *Summary) add(c testcase) {
	sig := "other"
	if m := sigRE.FindStringSubmatch(c.Name); m != nil {
		sig = m[1]
	}
	n := s.BySIG[sig]
	if n == nil {
		n = &Counts{}
		s.BySIG[sig] = n
	}
	spec := Spec{Name: SpecText(c.Name), Seconds: c.Time, First: firstLine(c)}
	switch {
	case c.Failure != nil || c.Error != nil || c.Status == "failed" || c.Status == "panicked" || c.Status == "timedout" || c.Status == "interrupted":
		n.Failed++
		s.Total.Failed++
		s.Failures = append(s.Failures, spec)
	case c.Skipped != nil || c.Status == "skipped":
		n.Skipped++
		s.Total.Skipped++
		s.Skips = append(s.Skips, spec)
	default:
		n.Passed++
		s.Total.Passed++
		s.Passed = append(s.Passed, spec.Name)
	}
}

// Write prints the table by SIG, then each failure and each skip.
func (s Summary) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIG\tpassed\tfailed\tskipped\t")
	sigs := make([]string, 0, len(s.BySIG))
	for sig := range s.BySIG {
		sigs = append(sigs, sig)
	}
	sort.Strings(sigs)
	for _, sig := range sigs {
		n := s.BySIG[sig]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", sig, n.Passed, n.Failed, n.Skipped)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t\n", s.Total.Passed, s.Total.Failed, s.Total.Skipped)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "FAIL %s (%.0fs)\n     %s\n", f.Name, f.Seconds, f.First)
	}
	for _, f := range s.Skips {
		fmt.Fprintf(w, "SKIP %s\n     %s\n", f.Name, f.First)
	}
	return nil
}

// labelsRE is the list of labels ginkgo's JUnit report appends to a
// spec's text ("[sig-node, NodeConformance, Conformance]"); every e2e
// spec has one, its SIG's at least.
var labelsRE = regexp.MustCompile(` \[[^\[\]]*\]$`)

// SpecText is a JUnit test case's name as ginkgo's --focus matches it:
// without the "[It]" before it and the labels after it.
func SpecText(name string) string {
	return labelsRE.ReplaceAllString(strings.TrimSpace(strings.TrimPrefix(name, "[It]")), "")
}

// filteredOut says whether a spec was skipped only because the focus or
// the skip pattern left it out; a spec that skipped itself while running
// (e2eskipper) says why.
func filteredOut(c testcase) bool {
	if c.Skipped == nil && c.Status != "skipped" {
		return false
	}
	return c.Skipped == nil || strings.TrimSpace(c.Skipped.Message) == "" || c.Skipped.Message == "skipped"
}

// firstLine is a failure's or a skip's first non-empty line of text.
func firstLine(c testcase) string {
	for _, m := range []*message{c.Failure, c.Error, c.Skipped} {
		if m == nil {
			continue
		}
		for _, s := range []string{m.Message, m.Text} {
			for _, l := range strings.Split(s, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					return shorten(l, 300)
				}
			}
		}
	}
	return ""
}

// shorten cuts s to n bytes at most, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
