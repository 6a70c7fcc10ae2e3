package grade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/engine"
)

// errTimeLimit is the cause of the context of a grading that reached the
// exercise's time limit.
var errTimeLimit = errors.New("the exercise's time limit was reached")

// Run grades one submission (learner names it in reports; "" for none):
// it boots the exercise's cluster with r, runs its setup, applies the
// submission's accepted objects (the refused ones never reach the
// cluster), runs every check (a failed check never stops the others) and
// tears the cluster down (unless r.KeepOnFailure is set and the grade did
// not pass). The exercise's time limit bounds all of it.
//
// The returned error is only for a grading interrupted through ctx; a
// grading that could not be done (cluster down, setup failed) is a Grade
// with Status StatusError.
func Run(ctx context.Context, r *engine.Runner, ex *Exercise, sub *Submission, learner string) (*Grade, error) {
	g := newGrade(ex, sub, learner)
	defer func() { g.Duration = time.Since(g.Started) }()
	// What is refused is known now: say it before a cluster boots, and
	// boot none when nothing is left to apply.
	name := sessionName(ex.Metadata.Name, learner)
	for _, rf := range g.Refused {
		progress(r, engine.Progress{Lab: name, Step: "submission", Message: rf.Error()})
	}
	if sub != nil && len(sub.Objects) == 0 && len(sub.Refused) > 0 {
		g.fail(ex, StatusRefused, "%s", nothingValid(len(sub.Refused)))
		progress(r, engine.Progress{Lab: name, Step: "submission", Message: g.Error + "; no cluster booted, score 0"})
		return g, nil
	}
	limit := ex.Timeout()
	gctx, cancel := context.WithTimeoutCause(ctx, limit, errTimeLimit)
	defer cancel()
	topo, needs := ex.Topology(), ex.Needs()
	es, err := r.StartFor(gctx, sessionName(ex.Metadata.Name, learner), topo, needs)
	if errors.Is(err, cluster.ErrMissingCapability) || errors.Is(err, cluster.ErrTopology) {
		g.fail(ex, StatusError, "%v", err) // no retry: the backend will not grow it
		return g, nil
	}
	if err != nil && gctx.Err() == nil {
		// A cluster that did not come up is the grader's problem, not the
		// learner's: try once more before giving up on the submission.
		progress(r, engine.Progress{Lab: sessionName(ex.Metadata.Name, learner), Message: fmt.Sprintf("cluster did not come up, retrying once: %v", err)})
		es, err = r.StartFor(gctx, sessionName(ex.Metadata.Name, learner), topo, needs)
	}
	if err != nil {
		if ctx.Err() != nil {
			g.fail(ex, StatusError, "interrupted: %v", ctx.Err())
			return g, ctx.Err()
		}
		g.fail(ex, StatusError, "%v", err)
		return g, nil
	}
	s := session{es}
	g.BootDuration = s.BootDuration()
	defer func() {
		g.Timeline = s.Timeline()
		keep := r.KeepOnFailure && !g.Passed
		kc, err := s.Close(ctx, keep)
		if keep {
			g.Kubeconfig = kc
			s.Progressf("cluster kept: KUBECONFIG=%s", kc)
		} else if err != nil {
			// The score stands; what is left behind must be said (on a
			// shared cluster it is someone else's clutter).
			s.Progressf("tear down: %v (kubelab down --all removes what is left)", err)
			if r.Log != nil {
				r.Log.Warn("tear down", "exercise", ex.Metadata.Name, "learner", learner, "err", err)
			}
		}
	}()
	s.Declare(ex.Bindings())
	if err := s.gradeSetup(gctx, ex, g); err != nil {
		g.fail(ex, StatusError, "%v", err)
		return g, interrupted(ctx)
	}
	if err := s.applySubmission(gctx, &ex.Spec.Submission, sub, g); err != nil {
		g.fail(ex, StatusError, "%v", err)
		return g, interrupted(ctx)
	}
	for _, i := range checkOrder(ex) {
		if ctx.Err() != nil {
			g.fail(ex, StatusError, "interrupted: %v", ctx.Err())
			return g, ctx.Err()
		}
		g.Checks = append(g.Checks, s.gradeCheck(gctx, ex, &ex.Spec.Checks[i], limit, g.Checks))
	}
	g.TimedOut = errors.Is(context.Cause(gctx), errTimeLimit)
	for _, c := range g.Checks {
		g.Score += c.Earned
	}
	g.Passed = g.Score >= g.PassingScore
	s.Progressf("score %d/%d (passing score %d)", g.Score, g.Max, g.PassingScore)
	return g, nil
}

// nothingValid is why a submission of which every part was refused
// scores 0 without a cluster.
func nothingValid(refused int) string {
	what := "the only part"
	switch {
	case refused == 2:
		what = "both parts"
	case refused > 2:
		what = fmt.Sprintf("all %d parts", refused)
	}
	return fmt.Sprintf("nothing to grade: %s of the submission broke the exercise's contract (see the refusals)", what)
}

func interrupted(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// sessionName names a grading's cluster after the exercise and learner.
func sessionName(exercise, learner string) string {
	name := exercise
	if learner != "" {
		name += "-" + learner
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-") // the cluster's name is cut to length, not this one
	if out == "" {
		out = "exercise"
	}
	return out
}

// Learner is one submission of a batch: a name and a directory.
type Learner struct {
	// Name is the learner's name in reports (the directory's name).
	Name string
	// Dir is the submission directory.
	Dir string
}

// Learners lists the sub-directories of dir (hidden ones skipped), one
// per learner, sorted by name.
func Learners(dir string) ([]Learner, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list submissions: %w", err)
	}
	var out []Learner
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, Learner{Name: e.Name(), Dir: filepath.Join(dir, e.Name())})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("list submissions in %s: %w", dir, errNoSubmission)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RunAll grades every learner's submission with r, parallel at a time (at
// least 1), each on its own cluster. Grades come back in the learners'
// order. A submission directory that cannot be read is a Grade with
// Status StatusError; the error is only for an interrupted batch.
func RunAll(ctx context.Context, r *engine.Runner, ex *Exercise, learners []Learner, parallel int) ([]*Grade, error) {
	out := make([]*Grade, len(learners))
	engine.SideBySide(ctx, len(learners), parallel, func(i int) {
		l := learners[i]
		sub, err := ReadSubmission(l.Dir, &ex.Spec.Submission)
		if err != nil {
			out[i] = NotGraded(ex, l.Name, l.Dir, "%v", err)
			return
		}
		out[i], _ = Run(ctx, r, ex, sub, l.Name)
	}, func(i int) {
		out[i] = NotGraded(ex, learners[i].Name, learners[i].Dir, "interrupted: %v", ctx.Err())
	})
	return out, ctx.Err()
}

func durationOf(d time.Duration) cluster.Duration { return cluster.Duration{Duration: d} }

// progress sends progress that belongs to no session.
func progress(r *engine.Runner, p engine.Progress) {
	if r.Progress != nil {
		r.Progress(p)
	}
}
