package features

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"
)

var (
	quotedRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	numberRE  = regexp.MustCompile(`\b\d[0-9a-zµ.]*`)
	keywordRE = regexp.MustCompile(`^(?:Given|When|Then|And|But|\*) `)
	// placeholderRE matches the capitalised placeholders of phrases.
	placeholderRE = regexp.MustCompile(`\b(?:DURATION|COUNTS|TIMING|N)\b`)
)

// normalize reduces a step's text to its shape for comparing it with the
// catalog: lower case, every quoted argument "x", every number or duration 0.
func normalize(s string) string {
	s = keywordRE.ReplaceAllString(strings.TrimSpace(s), "")
	s = quotedRE.ReplaceAllString(s, `"x"`)
	s = placeholderRE.ReplaceAllString(s, "0")
	s = numberRE.ReplaceAllString(s, "0")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Suggest returns the n phrases of the catalog closest to a step's text,
// closest first: the edit distance between the step's shape and the
// shape of each phrase and of its examples.
func Suggest(text string, n int) []Step {
	want := normalize(text)
	type scored struct {
		st   Step
		dist int
	}
	var all []scored
	for _, st := range catalog() {
		best := levenshtein.ComputeDistance(want, normalize(st.Phrase))
		for _, ex := range st.Examples {
			best = min(best, levenshtein.ComputeDistance(want, normalize(ex)))
		}
		all = append(all, scored{st, best})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	var out []Step
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.st)
	}
	return out
}

// ErrUndefinedStep is wrapped by the errors about steps that match no
// phrase of the library.
var ErrUndefinedStep = errors.New("undefined step")

// undefinedError says that a step matches no phrase and which three
// phrases come closest.
func undefinedError(text string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches no phrase of the step library; the closest are:", text)
	for _, st := range Suggest(text, 3) {
		fmt.Fprintf(&b, "\n    %s %s", st.Keyword, st.Phrase)
		if len(st.Examples) > 0 {
			fmt.Fprintf(&b, "\n        e.g. %s", st.Examples[0])
		}
	}
	b.WriteString("\n    (every phrase is listed in features/STEPS.md)")
	return fmt.Errorf("%w: %s", ErrUndefinedStep, b.String())
}

// patterns are the compiled patterns of the catalog, in catalog order.
var patterns = sync.OnceValue(func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, st := range catalog() {
		out = append(out, regexp.MustCompile(st.re))
	}
	return out
})

// matches returns the catalog steps whose pattern matches text.
func matches(text string) []Step {
	var out []Step
	for i, st := range catalog() {
		if patterns()[i].MatchString(text) {
			out = append(out, st)
		}
	}
	return out
}
