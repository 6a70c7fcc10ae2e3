package app

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes of kubelab, documented in `kubelab --help` and the README.
const (
	// ExitPassed: everything asked for was done and passed.
	ExitPassed = 0
	// ExitFailed: a lab, drill or check failed, or a grade is below the
	// passing score.
	ExitFailed = 1
	// ExitInvalid: invalid input: flags, arguments, a lab, exercise or
	// topology that does not validate, a submission with nothing valid
	// left, a directory with no labs or submissions.
	ExitInvalid = 2
	// ExitCannotRun: the work could not be done: a cluster did not boot,
	// an exercise's setup failed, Docker is missing.
	ExitCannotRun = 3
	// ExitInterrupted: interrupted by SIGINT or SIGTERM (128 + SIGINT).
	ExitInterrupted = 130
)

// exitCodesHelp is the exit-code table shown by `kubelab --help`.
const exitCodesHelp = `Exit codes:
  0    passed
  1    a lab, drill or check failed, or a grade is below the passing score
  2    invalid input (flags, arguments, lab/exercise/topology validation,
       a submission with nothing valid left, no labs or submissions found)
  3    could not run (a cluster did not boot, setup failed, Docker missing)
  130  interrupted (Ctrl-C, SIGTERM); everything started was removed`

// ExitError is an error that says which exit code it means. Only main
// turns it into an exit.
type ExitError struct {
	Code int
	Err  error
	// Silent errors were already reported (a tool's own exit status).
	Silent bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ErrInterrupted is the error of a command stopped by a signal.
var ErrInterrupted = errors.New("interrupted")

// withCode wraps err (nil stays nil) with an exit code, keeping an inner
// ExitError's code when there is one.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: code, Err: err}
}

// invalid marks err as invalid input (exit 2).
func invalid(err error) error { return withCode(ExitInvalid, err) }

// cannotRun marks err as work that could not be done (exit 3).
func cannotRun(err error) error { return withCode(ExitCannotRun, err) }

// invalidf is invalid(fmt.Errorf(...)).
func invalidf(format string, args ...any) error { return invalid(fmt.Errorf(format, args...)) }

// ExitCode is the process exit code for err, the result of Run.
func ExitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitPassed
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailed
}
