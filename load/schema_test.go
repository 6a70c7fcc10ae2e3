package load

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/internal/loadertest"
	"kubelab.dev/kubelab/ops"
)

var update = flag.Bool("update", false, "rewrite "+schemaFile+" from the Go types")

// schemaFile is the committed JSON Schema of lab files, relative to this
// package.
const schemaFile = "../schema/lab.v1alpha1.json"

// generateSchema reflects the JSON Schema of lab files from the Go types,
// with their doc comments as descriptions.
func generateSchema() ([]byte, error) {
	s, err := loadertest.ReflectSchema(&v1alpha1.Lab{}, "https://kubelab.dev/schema/lab.v1alpha1.json",
		"kubelab lab file ("+v1alpha1.APIVersion+", kind "+v1alpha1.KindLab+")", ops.OperationKinds(),
		[][2]string{{"kubelab.dev/kubelab/load", "../api/v1alpha1"}})
	if err != nil {
		return nil, err
	}
	return loadertest.MarshalSchema(s)
}

func TestSchema(t *testing.T) {
	got, err := generateSchema()
	if err != nil {
		t.Fatal(err)
	}
	loadertest.CheckSchemaFile(t, schemaFile, got, *update, "go test ./load -run TestSchema -update")
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
	if len(op.OneOf) != len(ops.OperationKinds()) {
		t.Errorf("Operation has %d oneOf alternatives, want one per kind (%d)", len(op.OneOf), len(ops.OperationKinds()))
	}
	for _, k := range ops.OperationKinds() {
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
