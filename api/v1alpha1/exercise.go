package v1alpha1

import (
	"fmt"
)

// KindExercise is the kind of an exercise file (apiVersion APIVersion).
const KindExercise = "Exercise"

// Exercise is a graded task: a statement for the learner, the cluster the
// submission is graded on, setup operations, the contract a submission
// must respect, and checks worth points.
type Exercise struct {
	// APIVersion must be kubelab.dev/v1alpha1.
	APIVersion string `json:"apiVersion" yaml:"apiVersion" jsonschema:"enum=kubelab.dev/v1alpha1"`
	// Kind must be Exercise.
	Kind string `json:"kind" yaml:"kind" jsonschema:"enum=Exercise"`
	// Metadata names and describes the exercise.
	Metadata ExerciseMetadata `json:"metadata" yaml:"metadata"`
	// Spec is the task, the cluster, the contract and the checks.
	Spec ExerciseSpec `json:"spec" yaml:"spec"`
}

// ExerciseMetadata names and describes an exercise.
type ExerciseMetadata struct {
	// Name identifies the exercise: a DNS label such as spread-replicas.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$,maxLength=63"`
	// Title is a one-line human title, shown to the learner.
	Title string `json:"title" yaml:"title" jsonschema:"minLength=1"`
	// Difficulty is easy, medium or hard.
	Difficulty string `json:"difficulty,omitempty" yaml:"difficulty,omitempty" jsonschema:"enum=easy,enum=medium,enum=hard"`
	// Tags are free-form keywords for filtering.
	Tags []string `json:"tags,omitempty" yaml:"tags,omitempty"`
	// Topics are the seed topics the exercise practises, e.g. scheduler.
	Topics []string `json:"topics,omitempty" yaml:"topics,omitempty"`
	// Duration is the estimated time a learner needs to solve it.
	Duration Duration `json:"duration,omitzero" yaml:"duration,omitempty"`
}

// ExerciseSpec is what the learner is asked, and how a submission is
// graded.
//
// Grading boots the cluster, runs setup, applies the submission's objects
// that respect the contract, then runs every check in order (a failed
// check never stops the others) and adds up the points of those that
// passed. spec.timeout bounds all of it.
type ExerciseSpec struct {
	// Statement is the task shown to the learner, in Markdown: what to
	// build, under which names, and what will be checked.
	Statement string `json:"statement" yaml:"statement" jsonschema:"minLength=1"`
	// Notes are for teachers (not shown to learners), in Markdown: what
	// the checks do and do not prove, known limits of the simulation.
	Notes string `json:"notes,omitempty" yaml:"notes,omitempty"`
	// Timeout is the time limit for grading one submission: boot, setup,
	// applying the submission and every check. Checks that have not run
	// when it expires score nothing. Default 10m.
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Cluster is the topology the submission is graded on. Omitted counts
	// default to 1.
	Cluster Topology `json:"cluster,omitzero" yaml:"cluster,omitempty"`
	// Setup runs before the submission is applied (lab operations): the
	// existing workloads, taints or objects the task starts from. A setup
	// failure is an error of the exercise, not of the submission.
	Setup []Operation `json:"setup,omitempty" yaml:"setup,omitempty"`
	// Solution is the reference solution as operations, for what no
	// submission of manifests can repair (a dead component: `start`):
	// `kubelab solve` runs them after applying the solution directory, if
	// there is one, and the tests run them on the setup state. A learner
	// does the same with `kubelab fault`; say so in the statement.
	Solution []Operation `json:"solution,omitempty" yaml:"solution,omitempty"`
	// Submission is the contract a submission must respect.
	Submission Contract `json:"submission" yaml:"submission"`
	// Checks are graded in order; each is worth its points when all of
	// its operations pass.
	Checks []Check `json:"checks" yaml:"checks" jsonschema:"minItems=1"`
	// PassingScore is the score needed to pass (the exit code of `kubelab
	// grade`). Default: every point.
	PassingScore int `json:"passingScore,omitempty" yaml:"passingScore,omitempty"`
	// Samples are submissions shipped with the exercise (the reference
	// solution and wrong answers) with the exact score each must get; the
	// test suite grades them.
	Samples []Sample `json:"samples,omitempty" yaml:"samples,omitempty"`
	// SetupScore is the score of the cluster as setup leaves it, nothing
	// applied: what a learner sees on the first `kubelab check` of a
	// "fix" exercise. The test suite grades it like a sample.
	SetupScore *SetupScore `json:"setupScore,omitempty" yaml:"setupScore,omitempty"`
	// Protect lists objects of the setup the learner must repair in
	// place rather than delete and recreate. kubelab installs a
	// ValidatingAdmissionPolicy and its binding after setup that deny
	// deleting them (the learner gets the apiserver's denial with the
	// message), and records each one's uid after setup in the ConfigMap
	// kube-system/kubelab-exercise (key Kind.namespace.name) so that a
	// check can assert the object is still the same one.
	Protect []Protected `json:"protect,omitempty" yaml:"protect,omitempty"`
	// Mistakes are wrong repairs a learner makes on the live cluster
	// (a kubectl command, a kubelab fault command), as operations, each
	// with the exact score it gets: the samples of what no directory of
	// manifests can show. `kubelab solve --mistake NAME` makes one on a
	// live cluster, and the test suite makes each on the setup state of
	// a cluster of its own and grades it like a sample.
	Mistakes []Mistake `json:"mistakes,omitempty" yaml:"mistakes,omitempty"`
}

// Mistake is a documented wrong repair, made with operations.
type Mistake struct {
	// Name names the mistake (a DNS label), e.g. finalize-namespace.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Description says what the learner did and why it loses points.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Do is what the learner did, as lab operations, in order, on the
	// setup state.
	Do []Operation `json:"do" yaml:"do" jsonschema:"minItems=1"`
	// Score is the exact score the mistake gets.
	Score int `json:"score" yaml:"score"`
	// Fails lists the checks the mistake fails, by name. The score must
	// equal the maximum minus their points.
	Fails []string `json:"fails,omitempty" yaml:"fails,omitempty"`
}

// SetupScore is the documented score of the setup state.
type SetupScore struct {
	// Score is the exact score of the setup state.
	Score int `json:"score" yaml:"score"`
	// Fails lists the checks the setup state fails, by name. The score
	// must equal the maximum minus their points.
	Fails []string `json:"fails,omitempty" yaml:"fails,omitempty"`
	// Description says what is broken after setup.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
}

// Protected is an object of the setup that may not be deleted.
type Protected struct {
	// Kind is a built-in kind, e.g. Deployment.
	Kind string `json:"kind" yaml:"kind" jsonschema:"minLength=1"`
	// Name is the object's name.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Namespace of a namespaced kind. Default: the contract's first
	// namespace.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// Message is the apiserver's denial when the learner deletes the
	// object. Default: "<Kind> <namespace>/<name> is part of the
	// exercise: repair it in place, do not delete it".
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// DefaultMessage is the denial of a protected object without a message.
func (p *Protected) DefaultMessage() string {
	if p.Message != "" {
		return p.Message
	}
	return fmt.Sprintf("%s %s is part of the exercise: repair it in place, do not delete it", p.Kind, p.Ref())
}

// Ref is the object as messages name it: namespace/name, or name when
// cluster-scoped.
func (p *Protected) Ref() string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

// UIDKey is the key of the object's setup uid in the ConfigMap
// kube-system/kubelab-exercise: Kind.namespace.name (Kind.name when
// cluster-scoped).
func (p *Protected) UIDKey() string {
	if p.Namespace == "" {
		return p.Kind + "." + p.Name
	}
	return p.Kind + "." + p.Namespace + "." + p.Name
}

// Contract is what a submission may contain: a directory of manifests
// (*.yaml, *.yml, *.json) whose objects are applied to the cluster. It is
// data, never code: nothing in it runs on the host. Objects that break the
// contract or a safety rule are refused (not applied) and reported with
// the file, the object and the rule.
//
// Safety rules that always apply: no privileged containers, no added
// capabilities beyond the Pod Security "baseline" set, no hostPath
// volumes, no hostNetwork, hostPID, hostIPC or hostPort, at most 50
// replicas per workload, no symlinks, and only kinds of the built-in API.
type Contract struct {
	// Kinds lists the kinds a submission may contain, e.g. [Deployment,
	// Service]. A cluster-scoped kind (PriorityClass, ClusterRole...) is
	// allowed only when listed here.
	Kinds []string `json:"kinds" yaml:"kinds" jsonschema:"minItems=1"`
	// Namespaces lists the namespaces objects may be in. Objects that do
	// not name one go to the first. The grader creates them before
	// applying the submission. Default [default].
	Namespaces []string `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`
	// MaxObjects bounds the number of objects in a submission. Default 20,
	// at most 200.
	MaxObjects int `json:"maxObjects,omitempty" yaml:"maxObjects,omitempty"`
}

// DefaultNamespace is where the submission's objects that name no
// namespace are applied.
func (c *Contract) DefaultNamespace() string {
	if len(c.Namespaces) > 0 {
		return c.Namespaces[0]
	}
	return "default"
}

// Check is one graded property of the submission: operations that must
// all pass (waits, asserts, kubectl with expectOutput, and faults such as
// nodeDown followed by a wait).
type Check struct {
	// Name identifies the check in reports (a JUnit testcase, a scoreboard
	// column); unique within the exercise.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Points the check is worth (0 for an informational check).
	Points int `json:"points" yaml:"points"`
	// Hint is shown to the learner when the check fails: what to look at,
	// without giving the answer away.
	Hint string `json:"hint" yaml:"hint" jsonschema:"minLength=1"`
	// Explanation says why the property matters, in Markdown; shown in
	// reports.
	Explanation string `json:"explanation" yaml:"explanation" jsonschema:"minLength=1"`
	// Timeout caps the check's try operations (finally has its own
	// timeouts); none by default (the exercise's time limit still
	// applies).
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Try lists the operations, run in order until one fails; the check
	// passes when all pass.
	Try []Operation `json:"try" yaml:"try" jsonschema:"minItems=1"`
	// Destructive marks a check that changes the cluster (cordons,
	// drains, deletes, takes a node down, kills a component): `kubelab
	// check` and `check --watch` on a live cluster skip it and say so,
	// so a learner's cluster is never changed behind their back;
	// `kubelab check --final` and `kubelab grade` run it, after every
	// other check. Unset, it is inferred from the check's operations (any
	// that is not read-only makes it destructive: see readOnly on script
	// and nodeExec); false on a check that changes the cluster is an
	// error.
	Destructive *bool `json:"destructive,omitempty" yaml:"destructive,omitempty"`
	// Finally runs after try whether it passed or not, e.g. nodeUp or
	// uncordon to undo a fault for the next checks, also when try ran out
	// of time (with its own timeouts). A finally operation that fails
	// fails the check: the cluster is no longer what it was.
	Finally []Operation `json:"finally,omitempty" yaml:"finally,omitempty"`
	// Needs names checks this one builds on, which run before it: when one
	// of them did not pass, this check is not run and scores nothing, and
	// its result says which one it needed (a check that waits for pods a
	// failed check lost would otherwise wait out its timeout to say less).
	Needs []string `json:"needs,omitempty" yaml:"needs,omitempty"`
}

// Sample is a submission shipped with the exercise and the score it must
// get.
type Sample struct {
	// Path is the submission directory, relative to the exercise file,
	// e.g. solution or wrong/one-replica.
	Path string `json:"path" yaml:"path" jsonschema:"minLength=1"`
	// Score is the exact score the sample gets.
	Score int `json:"score" yaml:"score"`
	// Fails lists the checks the sample fails, by name. The score must
	// equal the maximum minus their points.
	Fails []string `json:"fails,omitempty" yaml:"fails,omitempty"`
	// Refused lists the rules of the objects the sample has refused, in
	// file order (e.g. cluster-scoped, privileged).
	Refused []string `json:"refused,omitempty" yaml:"refused,omitempty"`
	// Description says what is wrong with the sample, or why it is right.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
}
