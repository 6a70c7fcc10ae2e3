package ops

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"kubelab.dev/kubelab/assertions"
)

// Template is one templated string of an operation's body, as the loader
// checked it: literal text and compiled binding paths, in order. See
// Operation for what templates are.
type Template struct {
	Parts []TemplatePart
}

// TemplatePart is literal text, when Path is nil, or a binding path
// (before.leader) compiled against the bindings recorded before it.
type TemplatePart struct {
	Text string
	Path *assertions.Compiled
}

// Render evaluates the template's binding paths: strings are inserted as
// they are, other values as expressions print them.
func (t *Template) Render(ctx context.Context, view assertions.View, bindings map[string]any) (string, error) {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Path == nil {
			b.WriteString(p.Text)
			continue
		}
		v, err := assertions.Eval(ctx, p.Path, view, bindings)
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

// Rendered returns a copy of body (a pointer to an operation's body) with
// its templates (by field path) rendered; body itself is shared by every
// run of the lab and stays as written.
func Rendered(ctx context.Context, body any, ts map[string]*Template, view assertions.View, bindings map[string]any) (any, error) {
	cp := deepCopy(reflect.ValueOf(body))
	var errs []error
	setStrings(cp, "", func(field, s string) string {
		t := ts[field]
		if t == nil {
			return s
		}
		out, err := t.Render(ctx, view, bindings)
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

// WalkStrings calls fn with every string of body (a struct or a pointer
// to one) that a lab file sets: string fields and items of string lists,
// at their path (target, args[1], retry.x), through nested structs.
func WalkStrings(body any, fn func(path, s string)) {
	setStrings(reflect.ValueOf(body), "", func(p, s string) string { fn(p, s); return s })
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
			if path != "" {
				name = path + "." + name
			}
			setStrings(v.FieldByIndex(f.Index), name, fn)
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
