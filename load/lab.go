package load

import (
	"fmt"
	"iter"
	"reflect"
	"time"

	"kubelab.dev/kubelab/api/v1alpha1"
	"kubelab.dev/kubelab/cluster"
	"kubelab.dev/kubelab/ops"
)

// DefaultLabTimeout bounds a whole lab when spec.timeout is not set.
const DefaultLabTimeout = 10 * time.Minute

// Lab is a loaded and checked lab file (ReadLab, ParseLab): its content
// (a v1alpha1.Lab converted to the types that run: its operations are
// ops.Operation, its topology a cluster.Topology), with the defaults
// filled in, and what the loader found out about it.
type Lab struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   v1alpha1.Metadata `yaml:"metadata"`
	Spec       Spec              `yaml:"spec"`
	Source     `yaml:"-"`

	steps []ops.Pos
}

// Spec is v1alpha1.Spec as it runs; see there for its fields.
type Spec struct {
	Timeout cluster.Duration `yaml:"timeout,omitempty"`
	Cluster cluster.Topology `yaml:"cluster,omitempty"`
	Steps   []Step           `yaml:"steps"`
	Catch   []ops.Operation  `yaml:"catch,omitempty"`
	Finally []ops.Operation  `yaml:"finally,omitempty"`
	Cleanup []ops.Operation  `yaml:"cleanup,omitempty"`
}

// Step is v1alpha1.Step as it runs; see there for its fields.
type Step struct {
	Name            string           `yaml:"name"`
	Description     string           `yaml:"description,omitempty"`
	Timeout         cluster.Duration `yaml:"timeout,omitempty"`
	ContinueOnError bool             `yaml:"continueOnError,omitempty"`
	Try             []ops.Operation  `yaml:"try"`
}

// Source is what the loader found out about a file besides its content:
// where it was read from and the names its operations bind. A checked Lab
// embeds it, and so does package grade's checked exercise
// (Document.Source).
type Source struct {
	file     string
	bindings map[string]reflect.Type
}

// File is the path the file was loaded from.
func (s *Source) File() string { return s.file }

// Bindings returns the names bound by record operations anywhere in the
// file, with the static type of their values (nil when unknown).
// Expressions in a lab's catch, finally and cleanup may refer to a binding
// whose record did not run because an earlier step failed; give it the
// zero value of its type.
func (s *Source) Bindings() map[string]reflect.Type { return s.bindings }

// StepPos is where the i-th step starts in the lab file.
func (l *Lab) StepPos(i int) ops.Pos { return l.steps[i] }

// Timeout is the lab's timeout (spec.timeout or DefaultLabTimeout).
func (l *Lab) Timeout() time.Duration {
	if d := l.Spec.Timeout.Duration; d > 0 {
		return d
	}
	return DefaultLabTimeout
}

// NeedsNodeInternals reports whether the lab looks or reaches inside nodes
// (iptables(), cri(), nodeExec, a fault on worker-2/kubelet), which needs a
// backend with real nodes.
func (l *Lab) NeedsNodeInternals() bool {
	_, ok := l.Needs()[cluster.CapNodeInternals]
	return ok
}

// NeedsEtcdSnapshots reports whether the lab takes or restores etcd
// snapshots, which needs a backend that is a cluster.EtcdRestorer.
func (l *Lab) NeedsEtcdSnapshots() bool {
	_, ok := l.Needs()[cluster.CapEtcdSnapshots]
	return ok
}

// Operations yields every operation of the lab with its path, in
// document order: the steps, then catch, finally and cleanup.
func (l *Lab) Operations() iter.Seq2[string, *ops.Operation] {
	return func(yield func(string, *ops.Operation) bool) {
		for i := range l.Spec.Steps {
			for j := range l.Spec.Steps[i].Try {
				if !yield(fmt.Sprintf("spec.steps[%d].try[%d]", i, j), &l.Spec.Steps[i].Try[j]) {
					return
				}
			}
		}
		for _, sec := range []struct {
			name string
			ops  []ops.Operation
		}{{"catch", l.Spec.Catch}, {"finally", l.Spec.Finally}, {"cleanup", l.Spec.Cleanup}} {
			for j := range sec.ops {
				if !yield(fmt.Sprintf("spec.%s[%d]", sec.name, j), &sec.ops[j]) {
					return
				}
			}
		}
	}
}
