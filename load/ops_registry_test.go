package load

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kubelab.dev/kubelab/assertions"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/internal/loadertest"
	"kubelab.dev/kubelab/ops"
)

// TestOperationKinds walks every registered operation kind: each is a field
// of ops.Operation with its body's type and a property of the schema, and its
// example validates, summarizes and has a default timeout. Adding a kind
// without all of these fails here.
func TestOperationKinds(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root loadertest.Schema
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	props := root.Defs["Operation"].Properties
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[ops.Operation]()) {
		if f.IsExported() && f.Type.Kind() == reflect.Pointer {
			fields[yamlName(f)] = f.Type
		}
	}
	var registered []string
	topo := cluster.Topology{Etcd: 3, Workers: 1}
	// Bindings the examples of kinds that read one refer to, as if an
	// earlier operation had made them (restore names a snapshot).
	prior := map[string]reflect.Type{"backup": reflect.TypeFor[assertions.Snapshot]()}
	for _, k := range ops.Kinds() {
		registered = append(registered, k.Name)
		t.Run(k.Name, func(t *testing.T) {
			if fields[k.Name] != k.Type {
				t.Errorf("Operation.%s has type %v, the kind registers %v", k.Name, fields[k.Name], k.Type)
			}
			if props[k.Name] == nil {
				t.Errorf("the schema's Operation has no property %q", k.Name)
			}
			if d := ops.DefaultTimeout(k.Name); d <= 0 {
				t.Errorf("DefaultTimeout = %v, want > 0", d)
			}
			src := k.Name + ":\n  " + strings.ReplaceAll(strings.TrimRight(k.Example, "\n"), "\n", "\n  ")
			op, err := ParseOperation(src, "testdata", topo, prior)
			if err != nil {
				t.Fatalf("example %q does not validate: %v", src, err)
			}
			if op.Kind() != k.Name {
				t.Errorf("example parsed as kind %q", op.Kind())
			}
			if s := op.Op().Summary(); s == "" || !strings.Contains(op.Summary(), s) {
				t.Errorf("summary %q, Operation.Summary %q", s, op.Summary())
			}
			if d := op.Op().DefaultTimeout(); d <= 0 {
				t.Errorf("example's DefaultTimeout = %v, want > 0", d)
			}
			if want := op.Op().DefaultTimeout() + op.OwnDuration(); op.Timeout.Duration != want {
				t.Errorf("loaded timeout %v, want the default %v", op.Timeout.Duration, want)
			}
		})
	}
	for name := range fields {
		if !slices.Contains(registered, name) {
			t.Errorf("Operation.%s is not a registered kind", name)
		}
	}
}
