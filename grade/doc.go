// Package grade is kubelab's graded exercises: the exercise file (apiVersion
// kubelab.dev/v1alpha1, kind Exercise) and its loader, the contract a
// submission must respect and the reading of a submission against it,
// grading a submission on a cluster of its own (Run, RunAll) or a live
// cluster as it is (CheckExercise), and the reports: the summary, JSON,
// JUnit, Markdown, the scoreboard of a batch, and a grade drawn as a lab
// result for the HTML report.
//
// It builds on packages load and engine and does not duplicate them: the
// exercise file's types are api/v1alpha1's, exercise files are decoded and
// their operations checked by load.Document, setups and checks are
// operations run on an engine.Session, and a submission's manifests are
// parsed by load.ParseManifest. Neither load nor engine knows of
// exercises.
package grade
