package app

import (
	"os"
	"strings"
	"testing"
)

func TestSchemaPrintsTheShippedSchemas(t *testing.T) {
	for kind, file := range map[string]string{"lab": "../../../schema/lab.v1alpha1.json", "exercise": "../../../schema/exercise.v1alpha1.json"} {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out, code := run(t, "schema", kind)
		if code != 0 || out != string(want) {
			t.Errorf("kubelab schema %s: exit %d, output differs from %s", kind, code, file)
		}
	}
	if out, code := run(t, "schema", "pod"); code != ExitInvalid || !strings.Contains(out, "known: [exercise lab]") {
		t.Errorf("kubelab schema pod: exit %d:\n%s", code, out)
	}
}
