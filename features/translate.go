package features

// Translate replaces the drill's learner-facing texts with t of each, in
// file order: the title, the question, the model answer, the key points'
// statements, and each scenario's name and description, then the steps'
// texts. A key point's terms stay: they already hold both languages. With
// t the identity it lists them (see package i18n).
func (d *Drill) Translate(t func(string) string) {
	d.Title = t(d.Title)
	d.Question = t(d.Question)
	d.ModelAnswer = t(d.ModelAnswer)
	for i := range d.KeyPoints {
		d.KeyPoints[i].Point = t(d.KeyPoints[i].Point)
	}
	for i := range d.Scenarios {
		d.Scenarios[i].Name = t(d.Scenarios[i].Name)
		d.Scenarios[i].Description = t(d.Scenarios[i].Description)
	}
	for i := range d.Steps {
		d.Steps[i] = t(d.Steps[i])
	}
}
