// Package conformance holds the tests that run focused subsets of
// upstream Kubernetes' conformance suite through hack/conformance.sh, as
// CI does: one on a docker cluster, one on embedded (kwok) nodes, and a
// check of embedded-subset.txt, the list that defines which specs need
// no running container. The whole suite is the script's own command
// (docs/conformance.md).
package conformance
