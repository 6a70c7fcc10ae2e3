package load

import (
	"fmt"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/ops"
)

// The checks every kind of file shares (a lab, an exercise), beyond the
// shape the decoder checks: the header's values, and the lists of named
// items with operations (a lab's steps, an exercise's checks).

// header checks apiVersion, kind (want is the file's kind) and
// metadata.name; an empty value is reported by the decoder as missing.
func (c *checker) header(apiVersion, kind, want, name string) {
	if v := apiVersion; v != "" && v != v1alpha1.APIVersion {
		c.errorAt("apiVersion", "want %q, found %q", v1alpha1.APIVersion, v)
	}
	if v := kind; v != "" && v != want {
		c.errorAt("kind", "want %q, found %q", want, v)
	}
	if v := name; v != "" && (len(v) > 63 || !dnsLabelRE.MatchString(v)) {
		c.errorAt("metadata.name", "invalid name %q: want a DNS label (lower-case letters, digits and '-', at most 63 characters)", v)
	}
}

// checkNamed checks the list of named items at path: at least one when
// the list is written, unique names (noun names an item: "step") and a
// non-empty try list each. It returns where each item starts.
func checkNamed[T any](c *checker, path, noun string, items []T, item func(*T) (name string, try []ops.Operation)) []ops.Pos {
	if items != nil && len(items) == 0 {
		c.errorAt(path, "want at least one %s", noun)
	}
	first := map[string]ops.Pos{}
	pos := make([]ops.Pos, len(items))
	for i := range items {
		name, try := item(&items[i])
		p := fmt.Sprintf("%s[%d]", path, i)
		pos[i] = c.at(p)
		if at, dup := first[name]; dup && name != "" {
			c.errorAt(p+".name", "duplicate %s name %q (first at line %d)", noun, name, at.Line)
		} else {
			first[name] = pos[i]
		}
		if try != nil && len(try) == 0 {
			c.errorAt(p+".try", "want at least one operation")
		}
	}
	return pos
}
