package ops

import (
	"slices"
	"strings"
)

// ReadOnly is an Op that may leave the cluster as it found it. An Op that
// does not implement it, or whose ReadOnly is false, may change the
// cluster (apply, delete, cordon, taint, a fault, a node down...): an
// exercise check made with one is destructive, whatever it says.
type ReadOnly interface {
	ReadOnly() bool
}

// ReadOnly reports whether the operation leaves the cluster as it found
// it (see the ReadOnly interface).
func (o *Operation) ReadOnly() bool {
	r, ok := o.Op().(ReadOnly)
	return ok && r.ReadOnly()
}

// readingVerbs are the kubectl commands that only read the cluster.
var readingVerbs = []string{"get", "describe", "logs", "explain", "api-resources", "api-versions",
	"version", "cluster-info", "top", "auth", "diff", "wait", "events"}

// kubectlReads reports whether kubectl args only read the cluster: a
// reading command, or any command with --dry-run (client or server).
func kubectlReads(args []string) bool {
	for _, a := range args {
		if a == "--dry-run" || strings.HasPrefix(a, "--dry-run=") && a != "--dry-run=none" {
			return true
		}
	}
	return len(args) > 0 && slices.Contains(readingVerbs, args[0]) &&
		// auth reconcile writes RBAC objects.
		!(args[0] == "auth" && len(args) > 1 && args[1] == "reconcile")
}

// ReadOnly: a check changes nothing.
func (*WaitOp) ReadOnly() bool { return true }

// ReadOnly: a check changes nothing.
func (*AssertOp) ReadOnly() bool { return true }

// ReadOnly: a check changes nothing.
func (*ErrorOp) ReadOnly() bool { return true }

// ReadOnly: recording a value changes nothing.
func (*RecordOp) ReadOnly() bool { return true }

// ReadOnly: waiting changes nothing.
func (*SleepOp) ReadOnly() bool { return true }

// ReadOnly: a snapshot reads etcd into a file of the run's own.
func (*SnapshotOp) ReadOnly() bool { return true }

// ReadOnly: a probe of a reading kubectl command changes nothing.
func (p *ProbeOp) ReadOnly() bool { return kubectlReads(p.Kubectl) }

// ReadOnly: kubectl get, describe, logs, auth can-i and the like, or a
// --dry-run, change nothing.
func (k *KubectlOp) ReadOnly() bool { return kubectlReads(k.Args) }

// ReadOnly: what a shell command does cannot be known; its author says
// (readOnly: true).
func (s *ScriptOp) ReadOnly() bool { return s.ReadsOnly }

// ReadOnly: what a command in a node does cannot be known; its author says
// (readOnly: true).
func (n *NodeExecOp) ReadOnly() bool { return n.ReadsOnly }
