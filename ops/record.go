package ops

import (
	"context"
	"fmt"
	"time"

	"kubelab.dev/kubelab/assertions"
)

func init() {
	Register("record", "{name: before, expr: raft}", func(r *RecordOp) Op { return r })
}

// RecordOp binds the value of an expression to a name.
type RecordOp struct {
	Name string `yaml:"name"`
	Expr string `yaml:"expr"`

	compiled *assertions.Compiled
}

// Compiled is the type-checked expression.
func (r *RecordOp) Compiled() *assertions.Compiled { return r.compiled }

// Binding is the recorded name.
func (r *RecordOp) Binding() (name, field string) { return r.Name, "name" }

// Summary shows the binding.
func (r *RecordOp) Summary() string { return fmt.Sprintf("record %s = %s", r.Name, r.Expr) }

// DefaultTimeout is that of an instant operation.
func (r *RecordOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate compiles the expression and binds the name for the
// expressions after it.
func (r *RecordOp) Validate(c Checker) {
	r.compiled = c.Expr(r.Expr, "expr", false)
	c.Bind(r.Name, r.compiled, "name")
}

// Exec evaluates the expression into the binding.
func (r *RecordOp) Exec(ctx context.Context, env Env) (string, error) {
	v, err := assertions.Eval(ctx, r.compiled, env.View(), env.Bindings())
	if err != nil {
		return "", err
	}
	env.Bind(r.Name, v)
	return fmt.Sprintf("%s = %s", r.Name, assertions.Format(v)), nil
}
