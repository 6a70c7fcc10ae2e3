package engine

import (
	"context"
	"time"

	"kubelab.dev/kubelab/load"
)

// Stepper runs a lab's steps on a session one at a time, for a view in
// which the learner goes on step by step: the same step loop as
// Runner.Run, opened up. The session's cluster is the lab's (started with
// StartFor for the lab's cluster and needs); one goroutine drives it.
type Stepper struct {
	s    *Session
	next int
	done bool
}

// Steps prepares the session to run lab step by step: the lab's names are
// bound (to their zero values until a step records them) and the
// session's result becomes the lab's.
func (s *Session) Steps(lab *load.Lab) *Stepper {
	s.x.lab = lab
	s.x.res.Lab, s.x.res.Title, s.x.res.File = lab.Metadata.Name, lab.Metadata.Title, lab.File()
	s.Declare(lab.Bindings())
	return &Stepper{s: s}
}

// Next is the index of the step Step runs next; the number of steps once
// every step ran.
func (p *Stepper) Next() int { return p.next }

// Step runs the next step and returns its result; ok is false when every
// step had run. After a failed step (not continueOnError) the remaining
// steps are skipped, as in a lab run.
func (p *Stepper) Step(ctx context.Context) (sr StepResult, ok bool) {
	if p.done || p.next >= len(p.s.x.lab.Spec.Steps) {
		return StepResult{}, false
	}
	sr = p.s.x.stepAt(ctx, p.next)
	p.next++
	return sr, true
}

// Finish runs what steps remain, then the lab's hooks (catch after a
// failure, finally, cleanup), stops its background operations and returns
// the lab's result. The cluster stays up: closing the session removes it.
func (p *Stepper) Finish(ctx context.Context) *Result {
	res := p.s.x.res
	if p.done {
		return res
	}
	for {
		if _, ok := p.Step(ctx); !ok {
			break
		}
	}
	p.done = true
	p.s.x.endSteps(ctx)
	p.s.x.stopBackground()
	res.Timeline = p.s.x.tl.events()
	res.Recovery = Recoveries(res.Timeline)
	res.Duration = time.Since(res.Started)
	return res
}
