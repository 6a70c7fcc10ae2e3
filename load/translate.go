package load

import "kubelab.dev/kubelab/ops"

// Translate replaces the lab's learner-facing texts with t of each, in
// document order: the title and description, each step's name and
// description with its operations' descriptions, then the descriptions
// of the catch, finally and cleanup operations. With t the identity it
// lists them (see package i18n).
func (l *Lab) Translate(t func(string) string) {
	l.Metadata.Title = t(l.Metadata.Title)
	l.Metadata.Description = t(l.Metadata.Description)
	for i := range l.Spec.Steps {
		st := &l.Spec.Steps[i]
		st.Name = t(st.Name)
		st.Description = t(st.Description)
		TranslateOps(st.Try, t)
	}
	for _, sec := range [][]ops.Operation{l.Spec.Catch, l.Spec.Finally, l.Spec.Cleanup} {
		TranslateOps(sec, t)
	}
}

// TranslateOps replaces the descriptions of operations with t of each.
func TranslateOps(list []ops.Operation, t func(string) string) {
	for i := range list {
		list[i].Description = t(list[i].Description)
	}
}
