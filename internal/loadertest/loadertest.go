// Package loadertest holds what the tests of kubelab's file loaders (labs
// in package engine, exercises in package grade) share: the `# want:`
// lines of invalid fixtures and how to compare them with the problems
// found, and the JSON Schema side of the schema tests (the mapper the
// schemas are generated with, and a conformance walk of YAML documents).
// It does not load anything itself, and imports neither loader.
package loadertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
)

// Want is one expected problem of a fixture, written in it as
// `# want: [file:]line:col: substring`.
type Want struct {
	// File is the fixture, or the file named relative to it.
	File string
	// Line and Column locate the problem.
	Line, Column int
	// Text is a substring of the problem's message.
	Text string
}

var wantRE = regexp.MustCompile(`^# want: (?:([^:\s]+):)?(\d+):(\d+): (.+)$`)

// Wants reads the expected problems of the fixture at path, in order.
func Wants(t testing.TB, path string) []Want {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ws []Want
	for _, l := range strings.Split(string(data), "\n") {
		m := wantRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		file := path
		if m[1] != "" {
			file = filepath.Join(filepath.Dir(path), m[1])
		}
		ws = append(ws, Want{File: file, Line: line, Column: col, Text: m[4]})
	}
	return ws
}

// CheckProblems compares the problems a loader found, each rendered as
// file:line:column: ..., with the wanted ones, one by one in order.
func CheckProblems[P error](t testing.TB, wants []Want, got []P) {
	t.Helper()
	for i := range max(len(wants), len(got)) {
		switch {
		case i >= len(got):
			t.Errorf("missing problem %s:%d:%d: %s", wants[i].File, wants[i].Line, wants[i].Column, wants[i].Text)
		case i >= len(wants):
			t.Errorf("unexpected problem %s", got[i].Error())
		default:
			p, w := got[i].Error(), wants[i]
			if !strings.HasPrefix(p, fmt.Sprintf("%s:%d:%d: ", w.File, w.Line, w.Column)) || !strings.Contains(p, w.Text) {
				t.Errorf("problem %d:\n got %s\nwant %s:%d:%d: ...%s...", i, p, w.File, w.Line, w.Column, w.Text)
			}
		}
	}
}

// durationPattern matches Go duration strings such as 30s, 1m30s or 0.
const durationPattern = `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`

// Mapper is the jsonschema.Reflector mapper of kubelab's schemas: it
// renders durations as strings and label values as nullable strings.
func Mapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[v1alpha1.Duration]():
		return &jsonschema.Schema{Type: "string", Pattern: durationPattern}
	case reflect.TypeFor[map[string]*string]():
		return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{
			OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "null"}},
		}}
	}
	return nil
}

// Schema is the part of a JSON Schema the sanity tests walk.
type Schema struct {
	Ref                  string             `json:"$ref"`
	Defs                 map[string]*Schema `json:"$defs"`
	Type                 string             `json:"type"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *Schema            `json:"items"`
	Required             []string           `json:"required"`
	OneOf                []*Schema          `json:"oneOf"`
	Description          string             `json:"description"`
}

// Conform checks n, a node of the YAML file named file, against s, a part
// of the schema root: types, known and required properties, list items,
// and oneOf alternatives that only require properties.
func Conform(t testing.TB, file string, root, s *Schema, n *yaml.Node) {
	t.Helper()
	for s.Ref != "" {
		s = root.Defs[filepath.Base(s.Ref)]
	}
	where := func() string { return fmt.Sprintf("%s:%d:%d", file, n.Line, n.Column) }
	switch s.Type {
	case "object":
		if n.Kind != yaml.MappingNode {
			t.Errorf("%s: want an object", where())
			return
		}
		keys := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			keys[k] = true
			switch p := s.Properties[k]; {
			case p != nil:
				Conform(t, file, root, p, v)
			case string(s.AdditionalProperties) == "false":
				t.Errorf("%s: property %q is not in the schema", where(), k)
			}
		}
		for _, r := range s.Required {
			if !keys[r] {
				t.Errorf("%s: required property %q missing", where(), r)
			}
		}
		matched := 0
		for _, alt := range s.OneOf {
			if len(alt.Required) > 0 && keys[alt.Required[0]] {
				matched++
			}
		}
		if len(s.OneOf) > 0 && s.OneOf[0].Required != nil && matched != 1 {
			t.Errorf("%s: matches %d oneOf alternatives, want 1", where(), matched)
		}
	case "array":
		if n.Kind != yaml.SequenceNode {
			t.Errorf("%s: want an array", where())
			return
		}
		for _, item := range n.Content {
			Conform(t, file, root, s.Items, item)
		}
	case "string", "integer", "boolean":
		if n.Kind != yaml.ScalarNode {
			t.Errorf("%s: want a %s", where(), s.Type)
		}
	}
}

// ReflectSchema reflects the JSON Schema of v (a *Lab or an *Exercise)
// the way both file formats are published: field names from the yaml
// tags, descriptions from the doc comments of the packages given as
// import path → directory (relative to the test), an operation being
// exactly one of kinds, and a ManifestOp either a file or a manifest.
func ReflectSchema(v any, id, title string, kinds []string, comments [][2]string) (*jsonschema.Schema, error) {
	r := &jsonschema.Reflector{FieldNameTag: "yaml", Mapper: Mapper}
	for _, c := range comments {
		if err := r.AddGoComments(c[0], c[1], jsonschema.WithFullComment()); err != nil {
			return nil, err
		}
	}
	s := r.Reflect(v)
	s.ID, s.Title = jsonschema.ID(id), title
	op := s.Definitions["Operation"]
	for _, k := range kinds {
		op.OneOf = append(op.OneOf, &jsonschema.Schema{Required: []string{k}})
	}
	m := s.Definitions["ManifestOp"]
	m.OneOf = []*jsonschema.Schema{{Required: []string{"file"}}, {Required: []string{"manifest"}}}
	return s, nil
}

// MarshalSchema is s indented, with a final newline.
func MarshalSchema(s *jsonschema.Schema) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// CheckSchemaFile compares the committed schema at path with got, or
// writes got there when update is set; regen is the command that does.
func CheckSchemaFile(t testing.TB, path string, got []byte, update bool, regen string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != string(got) {
		t.Fatalf("%s is stale or missing (%v); regenerate it with:\n\t%s", filepath.Clean(path), err, regen)
	}
}
