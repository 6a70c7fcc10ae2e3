package assertions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// ErrCompilerFailed says the expression compiler (expr-lang) failed on an
// expression that passed its own parser and type checker: a defect of the
// compiler, not of the expression.
var ErrCompilerFailed = errors.New("the expression compiler failed on a valid-looking expression")

// compileProgram is expr.Compile, hardened against defects of the
// compiler. expr-lang v1.17.8 (the newest release) rewrites
// `filter(list, cond)[0]` into a find() node that its code generator
// cannot take a field of, so `filter(...)[0].name` fails with a nil
// pointer dereference. Its optimizer only rewrites trees into equivalent
// ones, so on such a failure the expression is compiled again without it;
// if that fails too, the error says it is the compiler's fault and how to
// write the expression another way.
func compileProgram(src string, opts ...expr.Option) (*vm.Program, error) {
	prog, err := safeCompile(src, opts)
	if err == nil || !compilerFailed(err) {
		return prog, err
	}
	if prog, err2 := safeCompile(src, append(opts, expr.Optimize(false))); err2 == nil {
		return prog, nil
	}
	return nil, compilerFailure(err)
}

// safeCompile turns a panic of the compiler into an error carrying a
// stack, as expr-lang's own code generator does.
func safeCompile(src string, opts []expr.Option) (prog *vm.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("%v\n%s", r, panicMarker)
		}
	}()
	return expr.Compile(src, opts...)
}

// panicMarker ends the message of a recovered panic. expr-lang's compiler
// appends the goroutine's stack, which starts with the same word.
const panicMarker = "goroutine (recovered)"

// compilerFailed tells a recovered panic of the compiler from an error in
// the expression (syntax, types, unknown names), which carries no stack.
func compilerFailed(err error) bool {
	return strings.Contains(err.Error(), "\ngoroutine ")
}

func compilerFailure(err error) error {
	cause, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%w (expr-lang: %s); write it another way, e.g. first(filter(list, cond)).field "+
		"instead of filter(list, cond)[0].field", ErrCompilerFailed, cause)
}
