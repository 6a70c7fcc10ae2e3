// Package v1alpha1 is the wire format of kubelab's files, apiVersion
// kubelab.dev/v1alpha1: the Go types of a lab (kind Lab) and a graded
// exercise (kind Exercise), whose yaml tags and doc comments are the file
// format and the descriptions of its published JSON Schema.
//
// It holds what a file says and nothing found out about it: positions,
// defaults, compiled expressions and the checking itself belong to
// package load (and to package grade for an exercise's own rules). The
// operations a lab or an exercise lists are ops.Operation, whose bodies
// are the operation kinds themselves; the topology is cluster.Topology,
// the input of the cluster facade.
package v1alpha1
