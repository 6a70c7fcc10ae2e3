package load

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"kubelab.dev/kubelab/ops"
)

// Problem is one thing wrong with a lab file.
type Problem struct {
	// File is the lab file, or a manifest file it references.
	File string `json:"file"`
	// Line of the offending YAML node (1-based).
	Line int `json:"line"`
	// Column of the offending YAML node (1-based).
	Column int `json:"column"`
	// Path is where in the document the problem is, e.g.
	// "spec.steps[1].try[0].wait.expr"; empty for the document itself.
	Path string `json:"path,omitempty"`
	// Message says what was expected and what was found.
	Message string `json:"message"`
}

// Error renders the problem as file:line:column: path: message.
func (p Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", p.File, p.Line, p.Column)
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is every problem found in a lab file. Load returns it as its
// error; use errors.As to get the list.
type Problems struct {
	// List is sorted by file, line and column.
	List []Problem
}

// Error renders one problem per line.
func (ps *Problems) Error() string {
	lines := make([]string, len(ps.List))
	for i, p := range ps.List {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// add records a problem.
func (ps *Problems) add(file string, pos ops.Pos, path, format string, args ...any) {
	ps.List = append(ps.List, Problem{File: file, Line: pos.Line, Column: pos.Column, Path: path, Message: fmt.Sprintf(format, args...)})
}

// sort orders the problems by file and position, keeping the order in which
// they were found for problems at the same place.
func (ps *Problems) sort() {
	slices.SortStableFunc(ps.List, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// orNil returns ps as an error, or nil when there are no problems.
func (ps *Problems) orNil() error {
	if len(ps.List) == 0 {
		return nil
	}
	ps.sort()
	return ps
}

// suggest returns ` (did you mean "x"?)` when one of the candidates is
// close to name, or "".
func suggest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c))
		if d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
