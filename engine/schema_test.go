package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/cluster"
)

var update = flag.Bool("update", false, "rewrite "+schemaFile+" from the Go types")

// schemaFile is the committed JSON Schema of lab files, relative to this
// package.
const schemaFile = "../schema/lab.v1alpha1.json"

// durationPattern matches Go duration strings such as 30s, 1m30s or 0.
const durationPattern = `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`

// generateSchema reflects the JSON Schema of lab files from the Go types,
// with their doc comments as descriptions.
func generateSchema() ([]byte, error) {
	r := &jsonschema.Reflector{FieldNameTag: "yaml", Mapper: schemaMapper}
	if err := r.AddGoComments("kubelab.dev/kubelab/engine", ".", jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	if err := r.AddGoComments("kubelab.dev/kubelab/cluster", "../cluster", jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	s := r.Reflect(&Lab{})
	s.ID = "https://kubelab.dev/schema/lab.v1alpha1.json"
	s.Title = "kubelab lab file (" + APIVersion + ", kind " + KindLab + ")"
	op := s.Definitions["Operation"]
	for _, k := range OperationKinds() {
		op.OneOf = append(op.OneOf, &jsonschema.Schema{Required: []string{k}})
	}
	m := s.Definitions["ManifestOp"]
	m.OneOf = []*jsonschema.Schema{{Required: []string{"file"}}, {Required: []string{"manifest"}}}
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// schemaMapper renders durations as strings and label values as nullable
// strings.
func schemaMapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[cluster.Duration]():
		return &jsonschema.Schema{Type: "string", Pattern: durationPattern}
	case reflect.TypeFor[map[string]*string]():
		return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{
			OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "null"}},
		}}
	}
	return nil
}

func TestSchema(t *testing.T) {
	got, err := generateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(schemaFile)
	if err != nil || !bytes.Equal(have, got) {
		t.Fatalf("%s is stale or missing (%v); regenerate it with:\n\tgo test ./engine -run TestSchema -update", filepath.Clean(schemaFile), err)
	}
}

// schemaDoc is the part of a JSON Schema the sanity test walks.
type schemaDoc struct {
	Ref                  string                `json:"$ref"`
	Defs                 map[string]*schemaDoc `json:"$defs"`
	Type                 string                `json:"type"`
	Properties           map[string]*schemaDoc `json:"properties"`
	AdditionalProperties json.RawMessage       `json:"additionalProperties"`
	Items                *schemaDoc            `json:"items"`
	Required             []string              `json:"required"`
	OneOf                []*schemaDoc          `json:"oneOf"`
	Description          string                `json:"description"`
}

func TestSchemaSanity(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root schemaDoc
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("%s is not valid JSON: %v", schemaFile, err)
	}
	for _, name := range []string{"Lab", "Operation", "Step", "Topology", "TargetOp"} {
		if root.Defs[name] == nil || root.Defs[name].Description == "" {
			t.Errorf("no described definition for %s", name)
		}
	}
	lab, op := root.Defs["Lab"], root.Defs["Operation"]
	if lab == nil || op == nil {
		t.FailNow()
	}
	if !slices.Equal(lab.Required, []string{"apiVersion", "kind", "metadata", "spec"}) {
		t.Errorf("Lab requires %v", lab.Required)
	}
	if len(op.OneOf) != len(OperationKinds()) {
		t.Errorf("Operation has %d oneOf alternatives, want one per kind (%d)", len(op.OneOf), len(OperationKinds()))
	}
	for _, k := range OperationKinds() {
		if op.Properties[k] == nil {
			t.Errorf("Operation has no property %q", k)
		}
	}
	// Every valid lab conforms to the schema's structure.
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		conform(t, f, &root, &root, doc.Content[0])
	}
}

// conform checks n against s: types, known and required properties,
// list items, and oneOf alternatives that only require properties.
func conform(t *testing.T, file string, root, s *schemaDoc, n *yaml.Node) {
	t.Helper()
	for s.Ref != "" {
		s = root.Defs[filepath.Base(s.Ref)]
	}
	where := func() string { return file + ":" + Pos{Line: n.Line, Column: n.Column}.String() }
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
				conform(t, file, root, p, v)
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
			conform(t, file, root, s.Items, item)
		}
	case "string", "integer", "boolean":
		if n.Kind != yaml.ScalarNode {
			t.Errorf("%s: want a %s", where(), s.Type)
		}
	}
}
