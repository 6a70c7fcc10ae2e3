// Package ops holds the operations of a lab file: Operation, the union a
// lab's steps list (exactly one of apply, kill, wait... set), and the kinds
// themselves, one file per kind or small family. Each kind's body (a
// TargetOp, a WaitOp...) implements Op (run it, describe it, its default
// timeout, its load-time checks) and registers itself once, by its key in
// the lab file.
//
// The fields of Operation and of every body are those of the wire types
// of the same names in package api/v1alpha1, documented there: a file is
// decoded into those, and package load converts them into these (one
// test keeps both sides field for field). The yaml tags here are the
// fields' names in a file, which load-time problems and templates refer
// to, and which turn an operation made in Go back into a file's text.
//
// The package does not decode YAML, hold a lab's state or know about
// steps: package load decodes and hands each operation a Checker, the
// engine hands it an Env at run time and records what happened.
package ops
