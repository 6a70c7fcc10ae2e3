package load

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// ParseOperation checks a single operation given in lab-file YAML, as if it
// were the only operation of a lab on topology t with the given bindings
// already recorded. Problems are reported against "<operation>" with
// positions inside src.
func ParseOperation(src, dir string, t cluster.Topology, bindings map[string]reflect.Type) (*ops.Operation, error) {
	topo, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata: {name: operation, title: operation}\nspec:\n  cluster: %s\n  steps:\n  - name: operation\n    try:\n    -", v1alpha1.APIVersion, v1alpha1.KindLab, topo)
	const header, indent = 8, 6 // lines before the operation, columns before its text
	for i, line := range strings.Split(strings.TrimRight(src, "\n"), "\n") {
		if i == 0 {
			b.WriteString(" " + line + "\n")
			continue
		}
		b.WriteString("      " + line + "\n")
	}
	lab, err := parseLab(dir+"/<operation>", []byte(b.String()), bindings)
	if err != nil {
		if ps, ok := err.(*Problems); ok {
			for i := range ps.List {
				ps.List[i].File = "<operation>"
				ps.List[i].Line -= header
				ps.List[i].Column = max(1, ps.List[i].Column-indent)
				ps.List[i].Path = strings.TrimPrefix(strings.TrimPrefix(ps.List[i].Path, "spec.steps[0].try[0]"), ".")
			}
		}
		return nil, err
	}
	return &lab.Spec.Steps[0].Try[0], nil
}
