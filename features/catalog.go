package features

import (
	"fmt"
	"io"
	"strings"
)

// WriteCatalog writes the step catalog in Markdown (STEPS.md): every
// phrase with what it does and examples, grouped as in the library.
func WriteCatalog(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Step catalog\n\n")
	b.WriteString("<!-- Generated from features/steps.go by `go test ./features -run TestCatalog -update`. Do not edit. -->\n\n")
	b.WriteString("Every phrase of the drill step library. Placeholders are in capitals, optional parts in\n")
	b.WriteString("brackets, alternatives separated by `|`. Any keyword (Given, When, Then, And, But) matches\n")
	b.WriteString("any phrase; the one shown reads best. Quoted arguments escape `\"` as `\\\"`. Each phrase\n")
	b.WriteString("runs engine operations (see `engine/lab.go`); expressions are those of `assertions/env.go`.\n")
	group := ""
	for _, st := range catalog() {
		if st.Group != group {
			group = st.Group
			fmt.Fprintf(&b, "\n## %s\n", group)
		}
		fmt.Fprintf(&b, "\n### %s %s\n\n%s\n\n```gherkin\n", st.Keyword, st.Phrase, st.Doc)
		for _, ex := range st.Examples {
			fmt.Fprintf(&b, "%s\n", ex)
			if st.DocString != "" {
				fmt.Fprintf(&b, "  \"\"\"\n")
				for _, l := range strings.Split(st.DocString, "\n") {
					fmt.Fprintf(&b, "  %s\n", l)
				}
				fmt.Fprintf(&b, "  \"\"\"\n")
			}
		}
		b.WriteString("```\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
