// Package conformance holds the test that runs a focused subset of
// upstream Kubernetes' conformance suite on a docker cluster through
// hack/conformance.sh, as CI does; the whole suite is the script's own
// command (docs/conformance.md).
package conformance
