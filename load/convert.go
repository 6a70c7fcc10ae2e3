package load

import (
	"fmt"
	"reflect"
)

// The wire types of package api/v1alpha1 say what a file may carry; the
// types the rest of kubelab runs on (ops.Operation and its kinds,
// cluster.Topology, Lab below) hold the same fields under the same names,
// plus what the loader finds out (compiled expressions, positions).
// Convert copies one into the other field by field name, as Kubernetes
// converts its versioned types into its internal ones. TestConvertible
// walks every wire type a file can reach and checks that each field has
// its counterpart, so a field added to one side alone fails a test rather
// than vanishing on load.

// Convert copies src (a wire value, e.g. a v1alpha1.Lab) into dst (a
// pointer to its internal counterpart). It panics if the types do not
// correspond, which Convertible reports first.
func Convert(dst, src any) {
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || d.IsNil() {
		panic(fmt.Sprintf("load.Convert: dst must be a non-nil pointer, not %T", dst))
	}
	if s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	if err := Convertible(d.Type().Elem(), s.Type()); err != nil {
		panic("load.Convert: " + err.Error())
	}
	convert(d.Elem(), s)
}

func convert(dst, src reflect.Value) {
	switch {
	case src.Type() == dst.Type():
		dst.Set(src)
	case src.Kind() == reflect.Pointer:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.New(dst.Type().Elem()))
		convert(dst.Elem(), src.Elem())
	case src.Kind() == reflect.Slice:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			convert(dst.Index(i), src.Index(i))
		}
	case src.Kind() == reflect.Map:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(dst.Type().Elem()).Elem()
			convert(v, it.Value())
			dst.SetMapIndex(it.Key().Convert(dst.Type().Key()), v)
		}
	case src.Kind() == reflect.Struct:
		for _, f := range wireFields(src.Type()) {
			df, _ := dst.Type().FieldByName(f.Name)
			convert(dst.FieldByIndex(df.Index), src.FieldByIndex(f.Index))
		}
	default: // a scalar of a named type (a Duration's time.Duration)
		dst.Set(src.Convert(dst.Type()))
	}
}

// Convertible reports why a value of the wire type src cannot be
// converted into one of dst: a field of either that the other lacks (dst
// may have fields no file sets: unexported ones, or tagged yaml:"-"), or
// with another yaml name or an incompatible type.
func Convertible(dst, src reflect.Type) error {
	return convertible(dst, src, src.String(), map[[2]reflect.Type]bool{})
}

func convertible(dst, src reflect.Type, path string, seen map[[2]reflect.Type]bool) error {
	if src == dst || seen[[2]reflect.Type{dst, src}] {
		return nil
	}
	seen[[2]reflect.Type{dst, src}] = true
	if src.Kind() != dst.Kind() {
		return fmt.Errorf("%s: a %s cannot become a %s", path, src, dst)
	}
	switch src.Kind() {
	case reflect.Pointer, reflect.Slice:
		return convertible(dst.Elem(), src.Elem(), path, seen)
	case reflect.Map:
		if !src.Key().ConvertibleTo(dst.Key()) {
			return fmt.Errorf("%s: map keys %s cannot become %s", path, src.Key(), dst.Key())
		}
		return convertible(dst.Elem(), src.Elem(), path, seen)
	case reflect.Struct:
		return structsConvertible(dst, src, path, seen)
	case reflect.Interface:
		return fmt.Errorf("%s: %s and %s are different interfaces", path, src, dst)
	}
	if !src.ConvertibleTo(dst) {
		return fmt.Errorf("%s: a %s cannot become a %s", path, src, dst)
	}
	return nil
}

func structsConvertible(dst, src reflect.Type, path string, seen map[[2]reflect.Type]bool) error {
	want := map[string]bool{}
	for _, f := range wireFields(dst) {
		want[f.Name] = true
	}
	for _, f := range wireFields(src) {
		df, ok := dst.FieldByName(f.Name)
		if !ok || !want[f.Name] {
			return fmt.Errorf("%s.%s: %s has no field %s for it", path, f.Name, dst, f.Name)
		}
		delete(want, f.Name)
		if yamlName(f) != yamlName(df) {
			return fmt.Errorf("%s.%s: written %q, but %s names it %q", path, f.Name, yamlName(f), dst, yamlName(df))
		}
		if err := convertible(df.Type, f.Type, path+"."+f.Name, seen); err != nil {
			return err
		}
	}
	for name := range want {
		return fmt.Errorf("%s: %s.%s is in no file (tag it yaml:\"-\" if it is not meant to be)", path, dst, name)
	}
	return nil
}

// wireFields are the fields of a struct type that a file sets: exported,
// not tagged yaml:"-". An embedded Duration's time.Duration counts as a
// field.
func wireFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && f.Tag.Get("yaml") != "-" {
			out = append(out, f)
		}
	}
	return out
}
