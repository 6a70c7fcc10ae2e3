// Package engine runs labs: a Runner boots a lab's cluster, runs its steps
// (and catch, finally and cleanup) operation by operation, records the
// timeline of faults, leaders and node states, derives recovery times and
// writes the reports. A Session runs single operations on a booted
// cluster, for drills and graded exercises.
//
// It loads nothing itself: a lab comes checked from package load, and the
// operation kinds are in package ops.
package engine
