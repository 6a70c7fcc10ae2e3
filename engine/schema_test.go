package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
	"kubelab.dev/kubelab/internal/loadertest"
)

var update = flag.Bool("update", false, "rewrite "+schemaFile+" from the Go types")

// schemaFile is the committed JSON Schema of lab files, relative to this
// package.
const schemaFile = "../schema/lab.v1alpha1.json"

// generateSchema reflects the JSON Schema of lab files from the Go types,
// with their doc comments as descriptions.
func generateSchema() ([]byte, error) {
	r := &jsonschema.Reflector{FieldNameTag: "yaml", Mapper: loadertest.Mapper}
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

func TestSchemaSanity(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root loadertest.Schema
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
		loadertest.Conform(t, f, &root, &root, doc.Content[0])
	}
}
