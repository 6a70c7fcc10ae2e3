package cluster

import (
	"context"
	"errors"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Poll runs check at once, then again after first, doubling the wait up
// to most, until check returns nil or ctx ends (k8s.io/apimachinery's
// wait). On the end of ctx the error joins check's last failure and
// ctx's error, so a timeout says what was still wrong.
func Poll(ctx context.Context, first, most time.Duration, check func(context.Context) error) error {
	var last error
	backoff := wait.Backoff{Duration: first, Factor: 2, Cap: most, Steps: math.MaxInt32}
	err := backoff.DelayFunc().Until(ctx, true, false, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return errors.Join(last, err)
	}
	return nil
}
