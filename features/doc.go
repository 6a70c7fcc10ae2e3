// Package features runs interview drills written in Gherkin on real lab
// clusters. Its step library turns each phrase ("When I kill the etcd
// leader", "Then within 5s a new etcd leader is elected") into one or a
// few engine operations, prepared and executed through an engine.Session
// exactly as the operations of a lab file: the library has no client of
// its own and no waiting loop of its own.
//
// Each scenario gets its own cluster, booted at the first step that needs
// it (so topology and timing steps may come in any order before) and torn
// down after the scenario. Scenario state travels in the context.Context
// godog passes from step to step.
//
// The *.feature files next to this package are the drills: each Feature
// carries an interview question and a model answer in its description
// (see README.md); STEPS.md lists every phrase. The package does not grade
// answers: `kubelab drill` shows the learner's answer next to the model
// answer and what the cluster actually did.
package features
