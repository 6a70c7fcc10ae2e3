package grade

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
	"kubelab.dev/kubelab/engine"
	"kubelab.dev/kubelab/internal/loadertest"
)

// exerciseSchemaFile is the committed JSON Schema of exercise files,
// relative to this package.
const exerciseSchemaFile = "../schema/exercise.v1alpha1.json"

var update = flag.Bool("update", false, "rewrite "+exerciseSchemaFile+" and the golden reports (testdata/golden) from the code")

// generateExerciseSchema reflects the JSON Schema of exercise files from
// the Go types, with their doc comments as descriptions.
func generateExerciseSchema() ([]byte, error) {
	r := &jsonschema.Reflector{FieldNameTag: "yaml", Mapper: loadertest.Mapper}
	if err := r.AddGoComments("kubelab.dev/kubelab/grade", ".", jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	if err := r.AddGoComments("kubelab.dev/kubelab/engine", "../engine", jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	if err := r.AddGoComments("kubelab.dev/kubelab/cluster", "../cluster", jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	s := r.Reflect(&Exercise{})
	s.ID = "https://kubelab.dev/schema/exercise.v1alpha1.json"
	s.Title = "kubelab exercise file (" + engine.APIVersion + ", kind " + KindExercise + ")"
	op := s.Definitions["Operation"]
	for _, k := range engine.OperationKinds() {
		op.OneOf = append(op.OneOf, &jsonschema.Schema{Required: []string{k}})
	}
	m := s.Definitions["ManifestOp"]
	m.OneOf = []*jsonschema.Schema{{Required: []string{"file"}}, {Required: []string{"manifest"}}}
	kinds := s.Definitions["Contract"].Properties.Value("kinds")
	for _, k := range allowableKinds() {
		kinds.Items.Enum = append(kinds.Items.Enum, k)
	}
	refused := s.Definitions["Sample"].Properties.Value("refused")
	for _, r := range Rules() {
		refused.Items.Enum = append(refused.Items.Enum, r)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

func TestExerciseSchema(t *testing.T) {
	got, err := generateExerciseSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(exerciseSchemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(exerciseSchemaFile)
	if err != nil || !bytes.Equal(have, got) {
		t.Fatalf("%s is stale or missing (%v); regenerate it with:\n\tgo test ./grade -run TestExerciseSchema -update", filepath.Clean(exerciseSchemaFile), err)
	}
}

func TestExerciseSchemaSanity(t *testing.T) {
	data, err := os.ReadFile(exerciseSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root loadertest.Schema
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("%s is not valid JSON: %v", exerciseSchemaFile, err)
	}
	for _, name := range []string{"Exercise", "ExerciseSpec", "Contract", "Check", "Sample", "Operation", "Topology"} {
		if root.Defs[name] == nil || root.Defs[name].Description == "" {
			t.Errorf("no described definition for %s", name)
		}
	}
	ex, check := root.Defs["Exercise"], root.Defs["Check"]
	if ex == nil || check == nil {
		t.FailNow()
	}
	if !slices.Equal(ex.Required, []string{"apiVersion", "kind", "metadata", "spec"}) {
		t.Errorf("Exercise requires %v", ex.Required)
	}
	if !slices.Equal(check.Required, []string{"name", "points", "hint", "explanation", "try"}) {
		t.Errorf("Check requires %v", check.Required)
	}
	// Every valid exercise, and every shipped one, conforms to the
	// schema's structure.
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	shipped, _ := filepath.Glob("../exercises/*/" + ExerciseFile)
	for _, f := range append(files, shipped...) {
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
