package grade

// NotGraded is the grade of a submission that could not be graded (Status
// StatusError, every check skipped): an unreadable directory, an
// interrupted batch, a grading pod that failed twice.
func NotGraded(ex *Exercise, learner, dir, format string, args ...any) *Grade {
	g := newGrade(ex, nil, learner)
	g.Submission = dir
	g.fail(ex, StatusError, format, args...)
	return g
}
