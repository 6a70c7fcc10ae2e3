// Package load turns kubelab's files into checked values.
//
// ReadLab and ParseLab decode a lab file (apiVersion kubelab.dev/v1alpha1,
// kind Lab) strictly: unknown fields, wrong types, invalid values,
// dangling references, broken manifests and expressions that do not
// type-check are all reported together, each with its file:line:column, as
// a *Problems error. On success they fill the defaults, compile every
// expression and template, parse every manifest and work out what the lab
// needs of its backend (Lab.Needs). DecodeDocument loads files of other
// kinds the same way (package grade builds exercises on it),
// ParseOperation checks a single operation for a running session, and
// ParseManifest parses Kubernetes objects with the same checks.
//
// It runs nothing and touches no cluster: package engine runs what it
// returns. The wire types themselves are in package api/v1alpha1.
package load
