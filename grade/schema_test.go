package grade

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

// exerciseSchemaFile is the committed JSON Schema of exercise files,
// relative to this package.
const exerciseSchemaFile = "../schema/exercise.v1alpha1.json"

var update = flag.Bool("update", false, "rewrite "+exerciseSchemaFile+" and the golden reports (testdata/golden) from the code")

// generateExerciseSchema reflects the JSON Schema of exercise files from
// the Go types, with their doc comments as descriptions.
func generateExerciseSchema() ([]byte, error) {
	s, err := loadertest.ReflectSchema(&v1alpha1.Exercise{}, "https://kubelab.dev/schema/exercise.v1alpha1.json",
		"kubelab exercise file ("+v1alpha1.APIVersion+", kind "+v1alpha1.KindExercise+")", ops.OperationKinds(),
		[][2]string{{"kubelab.dev/kubelab/grade", "../api/v1alpha1"}})
	if err != nil {
		return nil, err
	}
	kinds := s.Definitions["Contract"].Properties.Value("kinds")
	for _, k := range allowableKinds() {
		kinds.Items.Enum = append(kinds.Items.Enum, k)
	}
	refused := s.Definitions["Sample"].Properties.Value("refused")
	for _, r := range Rules() {
		refused.Items.Enum = append(refused.Items.Enum, r)
	}
	return loadertest.MarshalSchema(s)
}

func TestExerciseSchema(t *testing.T) {
	got, err := generateExerciseSchema()
	if err != nil {
		t.Fatal(err)
	}
	loadertest.CheckSchemaFile(t, exerciseSchemaFile, got, *update, "go test ./grade -run TestExerciseSchema -update")
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
