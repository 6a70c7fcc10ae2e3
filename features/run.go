package features

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/cucumber/godog"
)

// ErrFailed is returned by Run when a scenario failed or a step was
// undefined, pending or ambiguous.
var ErrFailed = errors.New("features failed")

// Options configure Run.
type Options struct {
	// Paths are feature files or directories of them.
	Paths []string
	// Format is godog's format list, e.g. "pretty" or
	// "progress,cucumber:out.json,junit:out.xml". Default "pretty".
	Format string
	// Output receives the formatter's output.
	Output io.Writer
	// NoColors strips ANSI colours from the output.
	NoColors bool
	// Tags filters scenarios, e.g. "~@slow".
	Tags string
	// TestingT, when set, runs each scenario as a subtest.
	TestingT *testing.T
}

// Run runs feature files with godog on the step library: strictly (an
// undefined, pending or ambiguous step fails the run) and one scenario
// after another, since each boots its own cluster. ctx bounds the run.
func Run(ctx context.Context, lib *Library, o Options) error {
	if o.Format == "" {
		o.Format = "pretty"
	}
	suite := godog.TestSuite{
		Name:                "kubelab",
		ScenarioInitializer: lib.InitializeScenario,
		Options: &godog.Options{
			Paths:          o.Paths,
			Format:         o.Format,
			Output:         o.Output,
			NoColors:       o.NoColors,
			Tags:           o.Tags,
			Strict:         true,
			Concurrency:    1,
			DefaultContext: ctx,
			TestingT:       o.TestingT,
		},
	}
	switch code := suite.Run(); code {
	case 0:
		return ctx.Err()
	case 1:
		return ErrFailed
	default:
		return fmt.Errorf("run features %v: godog exit status %d (bad options or feature files)", o.Paths, code)
	}
}
