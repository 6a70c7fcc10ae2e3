package engine

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"kubelab.dev/kubelab/assertions"
)

// Templates put bindings into operation arguments: "${before.leader}" in a
// string field (or an item of a list of strings) is replaced, when the
// operation runs, by the value of that binding path: a binding name, then
// fields and list indexes (`${out.json.items[0].metadata.name}`). Strings
// are inserted as they are, other values as expressions print them;
// `$${` is a literal `${` (for a shell's own `${VAR}`). Each template is
// type-checked at load time against the bindings recorded before it.
//
// A shell command (script.command) keeps the shell's own expansions:
// there a `${...}` that does not name a binding (`${HOME}`,
// `${p:-none}`) is left to the shell.
//
// Fields the loader compiles (expressions, regular expressions,
// manifests, patches, files) take no templates: expressions read bindings
// directly.

// noTemplate are the fields whose values are compiled at load time.
var noTemplate = map[string]bool{"expr": true, "until": true, "expectOutput": true, "expectError": true,
	"manifest": true, "file": true, "patch": true}

// shellFields are shell commands, where the shell's own ${VAR} stays.
var shellFields = map[string]bool{"command": true}

// templateRE matches one template or an escaped "$${".
var templateRE = regexp.MustCompile(`\$\$\{|\$\{([^}]*)\}`)

// bindingPathRE is what a template may contain: a binding, then fields
// and indexes.
var bindingPathRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\])*)\s*$`)

// template is one templated string: literal text and compiled binding
// paths, in order.
type template struct {
	parts []templatePart
}

type templatePart struct {
	text string               // literal text, when comp is nil
	comp *assertions.Compiled // a binding path
}

// hasTemplate tells whether s has a template or an escape to render.
func hasTemplate(s string) bool { return strings.Contains(s, "${") }

// templates parses and type-checks the templated strings of an
// operation's body (at p), keyed by their path relative to the body.
func (c *checker) templates(body any, p string) map[string]*template {
	out := map[string]*template{}
	walkStrings(reflect.ValueOf(body), "", func(field string, s string) {
		if !hasTemplate(s) {
			return
		}
		path := joinPath(p, field)
		if noTemplate[lastField(field)] {
			c.errorAt(path, "%s takes no ${...} templates: it is compiled when the lab is loaded (expressions read bindings directly)", lastField(field))
			return
		}
		if t := c.template(s, path, shellFields[lastField(field)]); t != nil {
			out[field] = t
		}
	})
	return out
}

// lastField is the last field name of a path, without an index.
func lastField(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		path = path[i+1:]
	}
	name, _, _ := strings.Cut(path, "[")
	return name
}

func (c *checker) template(s, path string, shell bool) *template {
	t := &template{}
	last, ok := 0, true
	for _, m := range templateRE.FindAllStringSubmatchIndex(s, -1) {
		t.parts = append(t.parts, templatePart{text: s[last:m[0]]})
		last = m[1]
		if s[m[0]:m[1]] == "$${" {
			t.parts = append(t.parts, templatePart{text: "${"})
			continue
		}
		inner := s[m[2]:m[3]]
		pm := bindingPathRE.FindStringSubmatch(inner)
		if shell && !c.bindingName(pm) {
			t.parts = append(t.parts, templatePart{text: s[m[0]:m[1]]}) // the shell's
			continue
		}
		if pm == nil {
			c.errorAt(path, "invalid template ${%s}: want ${NAME} or ${NAME.field...} with NAME a binding (write $${ for a literal ${)", inner)
			ok = false
			continue
		}
		name := pm[1]
		if _, bound := c.bindings[name]; !bound {
			switch at, later := c.recorded[name]; {
			case c.broken[name]:
			case later:
				c.errorAt(path, "template ${%s}: binding %q is used before it is recorded (at line %d)", inner, name, at.Line)
			default:
				c.errorAt(path, "template ${%s}: unknown binding %q%s (write $${ for a literal ${)", inner, name, suggest(name, boundNames(c.bindings)))
			}
			ok = false
			continue
		}
		if c.broken[name] {
			ok = false
			continue
		}
		comp, err := assertions.Compile(name+pm[2], c.bindings, false)
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			c.errorAt(path, "template ${%s}: %s", inner, msg)
			ok = false
			continue
		}
		t.parts = append(t.parts, templatePart{comp: comp})
	}
	if unclosed := strings.Index(strings.ReplaceAll(s[last:], "$${", ""), "${"); unclosed >= 0 && !shell {
		c.errorAt(path, "unterminated template %q: want ${NAME} (write $${ for a literal ${)", s[last:][unclosed:])
		return nil
	}
	t.parts = append(t.parts, templatePart{text: s[last:]})
	if !ok {
		return nil
	}
	return t
}

// bindingName tells whether a template's parsed binding path names a
// binding, recorded before or after it.
func (c *checker) bindingName(pm []string) bool {
	if pm == nil {
		return false
	}
	_, bound := c.bindings[pm[1]]
	_, later := c.recorded[pm[1]]
	return bound || later
}

func boundNames(b map[string]reflect.Type) []string {
	out := make([]string, 0, len(b))
	for n := range b {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// render evaluates the template's binding paths.
func (t *template) render(ctx context.Context, view assertions.View, bindings map[string]any) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.comp == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := assertions.Eval(ctx, p.comp, view, bindings)
		if err != nil {
			return "", err
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
		} else {
			b.WriteString(assertions.Format(v))
		}
	}
	return b.String(), nil
}

// rendered returns a copy of body (a pointer to an operation's body) with
// its templates rendered; body itself is shared by every run of the lab
// and stays as written.
func rendered(ctx context.Context, body any, ts map[string]*template, view assertions.View, bindings map[string]any) (any, error) {
	cp := deepCopy(reflect.ValueOf(body))
	var errs []error
	setStrings(cp, "", func(field, s string) string {
		t := ts[field]
		if t == nil {
			return s
		}
		out, err := t.render(ctx, view, bindings)
		if err != nil {
			errs = append(errs, fmt.Errorf("render %s %q: %w", field, s, err))
			return s
		}
		return out
	})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return cp.Interface(), nil
}

// walkStrings calls fn with every string of v (a struct or a pointer to
// one) that a lab file sets: string fields and items of string lists, at
// their path (target, args[1], retry.x), through nested structs.
func walkStrings(v reflect.Value, path string, fn func(path, s string)) {
	setStrings(v, path, func(p, s string) string { fn(p, s); return s })
}

func setStrings(v reflect.Value, path string, fn func(path, s string) string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setStrings(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(v.Type()) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name := yamlName(f)
			if name == "" || name == "-" {
				continue
			}
			setStrings(v.FieldByIndex(f.Index), joinPath(path, name), fn)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return
		}
		for i := range v.Len() {
			setStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.String:
		if out := fn(path, v.String()); out != v.String() && v.CanSet() {
			v.SetString(out)
		}
	}
}

// deepCopy copies a pointer to a struct, with its nested struct pointers
// and string lists, so that setting the copy's strings leaves v alone;
// other fields (compiled state) are shared.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		cp := reflect.New(v.Type().Elem())
		cp.Elem().Set(v.Elem())
		if cp.Elem().Kind() == reflect.Struct {
			copyFields(cp.Elem())
		}
		return cp
	}
	return v
}

func copyFields(s reflect.Value) {
	for _, f := range reflect.VisibleFields(s.Type()) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		fv := s.FieldByIndex(f.Index)
		switch {
		case fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct:
			fv.Set(deepCopy(fv))
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String && !fv.IsNil():
			fv.Set(reflect.ValueOf(slices.Clone(fv.Interface().([]string))).Convert(fv.Type()))
		case fv.Kind() == reflect.Struct:
			copyFields(fv)
		}
	}
}
