package grade

import "kubelab.dev/kubelab/load"

// Translate replaces the exercise's learner-facing texts with t of each,
// in document order: the title, the statement, the descriptions of the
// setup and solution operations, the messages of protected objects, and
// each check's name, hint, explanation and operations' descriptions. The
// notes (for teachers) and the samples (for tests) stay as written. With
// t the identity it lists them (see package i18n).
func (ex *Exercise) Translate(t func(string) string) {
	ex.Metadata.Title = t(ex.Metadata.Title)
	ex.Spec.Statement = t(ex.Spec.Statement)
	load.TranslateOps(ex.Spec.Setup, t)
	load.TranslateOps(ex.Spec.Solution, t)
	for i := range ex.Spec.Protect {
		ex.Spec.Protect[i].Message = t(ex.Spec.Protect[i].Message)
	}
	for i := range ex.Spec.Checks {
		c := &ex.Spec.Checks[i]
		c.Name = t(c.Name)
		for j := range c.Needs { // names, translated as the checks' are
			c.Needs[j] = t(c.Needs[j])
		}
		c.Hint = t(c.Hint)
		c.Explanation = t(c.Explanation)
		load.TranslateOps(c.Try, t)
		load.TranslateOps(c.Finally, t)
	}
}
