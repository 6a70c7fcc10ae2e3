package cluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPollRetriesUntilNilAndSaysTheLastFailure(t *testing.T) {
	tries := 0
	err := Poll(t.Context(), time.Millisecond, 4*time.Millisecond, func(context.Context) error {
		if tries++; tries < 5 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || tries != 5 {
		t.Errorf("Poll = %v after %d tries, want nil after 5", err, tries)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	err = Poll(ctx, time.Millisecond, 2*time.Millisecond, func(context.Context) error { return errors.New("still down") })
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "still down\ncontext deadline exceeded" {
		t.Errorf("Poll at the deadline = %q, want the last failure and the deadline", err)
	}
}
