package ops

import (
	"context"
	"time"

	"kubelab.dev/kubelab/cluster"
)

func init() {
	Register("sleep", "{duration: 1s}", func(s *SleepOp) Op { return s })
}

// SleepOp waits for a fixed duration.
type SleepOp struct {
	Duration cluster.Duration `yaml:"duration"`
}

// Summary shows the duration.
func (s *SleepOp) Summary() string { return "sleep " + s.Duration.String() }

// DefaultTimeout is that of an instant operation, on top of the duration.
func (s *SleepOp) DefaultTimeout() time.Duration { return writeTimeout }

// Validate refuses a duration written as zero (a missing one is reported
// by the decoder).
func (s *SleepOp) Validate(c Checker) {
	if v, ok := c.Scalar("duration"); ok && s.Duration.Duration == 0 {
		if d, err := time.ParseDuration(v); err == nil && d == 0 {
			c.Errorf("duration", "want a positive duration")
		}
	}
}

// Exec sleeps.
func (s *SleepOp) Exec(ctx context.Context, _ Env) (string, error) {
	return "", Sleep(ctx, s.Duration.Duration)
}

// OwnDuration is the duration.
func (s *SleepOp) OwnDuration() time.Duration { return s.Duration.Duration }
