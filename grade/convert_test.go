package grade

import (
	"reflect"
	"testing"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/load"
)

// TestConvertible checks that every field an exercise file may carry has
// its counterpart in Exercise, under the same name, and that Exercise has
// none a file cannot set.
func TestConvertible(t *testing.T) {
	if err := load.Convertible(reflect.TypeFor[Exercise](), reflect.TypeFor[v1alpha1.Exercise]()); err != nil {
		t.Error(err)
	}
}
