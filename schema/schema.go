// Package schema embeds the JSON Schemas of kubelab's file formats,
// generated from the Go types of package api/v1alpha1 (the tests of
// packages load and grade keep them current), so the binary can print
// them: `kubelab schema lab|exercise`.
//
// The files stay here rather than in api/v1alpha1: their path is
// published (every lab and exercise names it in its yaml-language-server
// line, and editors follow it), and go:embed reads only files below the
// package.
package schema

import (
	_ "embed"
	"fmt"
	"sort"
)

var (
	//go:embed lab.v1alpha1.json
	lab []byte
	//go:embed exercise.v1alpha1.json
	exercise []byte
)

var byKind = map[string][]byte{"lab": lab, "exercise": exercise}

// Kinds lists the formats with a schema.
func Kinds() []string {
	out := make([]string, 0, len(byKind))
	for k := range byKind {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// For returns the JSON Schema of a kind ("lab" or "exercise").
func For(kind string) ([]byte, error) {
	b, ok := byKind[kind]
	if !ok {
		return nil, fmt.Errorf("no schema for %q (known: %v)", kind, Kinds())
	}
	return b, nil
}
