package v1alpha1

// The only apiVersion of kubelab's files, and the kind of a lab file.
const (
	APIVersion = "kubelab.dev/v1alpha1"
	KindLab    = "Lab"
)

// Lab is a kubelab lab file: a cluster topology and the steps that break it
// and check how it recovers.
type Lab struct {
	// APIVersion must be kubelab.dev/v1alpha1.
	APIVersion string `json:"apiVersion" yaml:"apiVersion" jsonschema:"enum=kubelab.dev/v1alpha1"`
	// Kind must be Lab.
	Kind string `json:"kind" yaml:"kind" jsonschema:"enum=Lab"`
	// Metadata names and describes the lab.
	Metadata Metadata `json:"metadata" yaml:"metadata"`
	// Spec is the cluster and what happens to it.
	Spec Spec `json:"spec" yaml:"spec"`
}

// Metadata names and describes a lab.
type Metadata struct {
	// Name identifies the lab: a DNS label such as etcd-leader-failover.
	Name string `json:"name" yaml:"name" jsonschema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$,maxLength=63"`
	// Title is a one-line human title.
	Title string `json:"title" yaml:"title" jsonschema:"minLength=1"`
	// Description explains the lab, in Markdown.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Tags are free-form keywords for filtering.
	Tags []string `json:"tags,omitempty" yaml:"tags,omitempty"`
	// Topics are the seed topics the lab teaches, e.g. etcd-raft.
	Topics []string `json:"topics,omitempty" yaml:"topics,omitempty"`
	// Duration is the estimated time the lab takes, shown by `kubelab list`.
	Duration Duration `json:"duration,omitzero" yaml:"duration,omitempty"`
}

// Spec is the cluster of a lab and the operations run against it.
//
// Timeouts cascade: spec.timeout bounds the whole lab (steps, catch, finally
// and cleanup); a step's timeout bounds the step; an operation's timeout
// (its own, or the default of its kind) bounds the operation. An operation
// therefore ends at the earliest of the three deadlines.
type Spec struct {
	// Timeout bounds the whole lab. Default 10m.
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Cluster is the topology the lab runs on. Omitted counts default to 1.
	Cluster Topology `json:"cluster,omitzero" yaml:"cluster,omitempty"`
	// Steps run in order; the lab fails at the first failing step unless
	// that step sets continueOnError.
	Steps []Step `json:"steps" yaml:"steps" jsonschema:"minItems=1"`
	// Catch runs when a step failed.
	Catch []Operation `json:"catch,omitempty" yaml:"catch,omitempty"`
	// Finally always runs after the steps (and catch); if one of its
	// operations fails, a lab that passed fails.
	Finally []Operation `json:"finally,omitempty" yaml:"finally,omitempty"`
	// Cleanup runs last, before the cluster is torn down; if one of its
	// operations fails, a lab that passed fails.
	Cleanup []Operation `json:"cleanup,omitempty" yaml:"cleanup,omitempty"`
}

// Step is a named sequence of operations.
type Step struct {
	// Name is unique within the lab.
	Name string `json:"name" yaml:"name" jsonschema:"minLength=1"`
	// Description explains the step, in Markdown.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Timeout caps the step, including its operations; none by default
	// (the lab's timeout still applies).
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// ContinueOnError runs the next steps even when this one fails (the lab
	// still fails).
	ContinueOnError bool `json:"continueOnError,omitempty" yaml:"continueOnError,omitempty"`
	// Try lists the operations, run in order until one fails.
	Try []Operation `json:"try" yaml:"try" jsonschema:"minItems=1"`
}
