// Package v1alpha1 is the wire format of kubelab's files, apiVersion
// kubelab.dev/v1alpha1: every field a lab (kind Lab) or a graded exercise
// (kind Exercise) may carry, its operations and their bodies, and the
// cluster topology. Its yaml tags and doc comments are the file format
// and the descriptions of its published JSON Schema: whoever wants to
// know what a file may say reads this package.
//
// It holds what a file says and nothing found out about it, and imports
// no other package of kubelab. Package load decodes a file into these
// types, strictly, then converts them field by field (load.Convert) into
// the types that run: ops.Operation and its kinds, cluster.Topology, and
// its own Lab (grade's Exercise for an exercise), which also carry what
// the loader finds out (positions, defaults, compiled expressions).
package v1alpha1
