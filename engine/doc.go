// Package engine loads lab files and runs them.
//
// A lab file (apiVersion kubelab.dev/v1alpha1, kind Lab) describes a cluster
// topology and the steps run against it. Load decodes it strictly: unknown
// fields, wrong types, invalid values, dangling references, broken manifests
// and expressions that do not type-check are all reported together, each
// with its file:line:column, as a *Problems error. Document loads files of
// other kinds the same way, and a Session runs single operations on a
// booted cluster.
//
// It knows nothing of graded exercises: package grade builds them on
// Document, Session and ParseManifest.
package engine
