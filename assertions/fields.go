package assertions

import (
	"reflect"
	"sync"
)

// Fields lists the names expressions use for the fields of the
// environment's type called typeName (Pod, Node, Raft...), in declaration
// order; nil when no value an expression sees has that type. The type
// checker names a type by its Go name; a lab author knows its fields.
func Fields(typeName string) []string {
	t := envTypes()[typeName]
	if t == nil {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("expr"); tag != "" {
			name = tag
		}
		out = append(out, name)
	}
	return out
}

// envTypes indexes, by name, the struct types of this package that
// expressions see: of the environment's variables and functions, and of
// what operations record.
var envTypes = sync.OnceValue(func() map[string]reflect.Type {
	env, _ := typeEnv(nil)
	own := reflect.TypeFor[Pod]().PkgPath()
	out := map[string]reflect.Type{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		case reflect.Func:
			for i := range t.NumOut() {
				walk(t.Out(i))
			}
		case reflect.Struct:
			if t.PkgPath() != own || out[t.Name()] != nil {
				return
			}
			out[t.Name()] = t
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	for _, v := range env {
		if v != nil {
			walk(reflect.TypeOf(v))
		}
	}
	// What operations record (command output, probes, background
	// operations, etcd snapshots) is a binding's type, not the
	// environment's.
	for _, t := range []reflect.Type{reflect.TypeFor[CommandResult](), reflect.TypeFor[Probe](), reflect.TypeFor[Background](), reflect.TypeFor[Snapshot]()} {
		walk(t)
	}
	return out
})
