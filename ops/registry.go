package ops

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Kind is a registered operation kind.
type Kind struct {
	// Name is the kind's key in a lab file, e.g. kill.
	Name string
	// Type is the type of its body, e.g. *TargetOp.
	Type reflect.Type
	// Example is a valid body in lab-file YAML on a topology with 3 etcd
	// members and a worker-1, e.g. "{target: etcd-leader}".
	Example string

	bind func(spec any) Op
}

// Bind makes the operation of this kind with the given body (a value of
// Type; nil makes one with an empty body).
func (k Kind) Bind(spec any) Op {
	if spec == nil || reflect.ValueOf(spec).IsNil() {
		spec = reflect.New(k.Type.Elem()).Interface()
	}
	return k.bind(spec)
}

// registry holds every kind, filled once by the init functions of the
// kinds' files and read-only after.
var registry = map[string]Kind{}

// Register adds a kind whose body is a *T. Each kind's file calls it from
// init (and only there); a duplicate name is a programming error.
func Register[T any](name, example string, bind func(*T) Op) {
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("ops: kind %q registered twice", name))
	}
	registry[name] = Kind{Name: name, Type: reflect.TypeFor[*T](), Example: example,
		bind: func(spec any) Op { return bind(spec.(*T)) }}
}

// Lookup finds a kind by name.
func Lookup(name string) (Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// Kinds lists every registered kind, by name.
func Kinds() []Kind {
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// DefaultTimeout is the default timeout of a kind (with an empty body), 0
// for an unknown kind.
func DefaultTimeout(kind string) time.Duration {
	k, ok := Lookup(kind)
	if !ok {
		return 0
	}
	return k.Bind(nil).DefaultTimeout()
}

// Timeouts shared by families of kinds.
const (
	// writeTimeout bounds API writes and instant operations.
	writeTimeout = 30 * time.Second
	// slowTimeout bounds checks, faults and commands.
	slowTimeout = time.Minute
)
