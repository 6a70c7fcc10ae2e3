// Package ops holds the operation kinds of a lab file: apply, kill, wait
// and the rest, one file per kind or small family. Each kind implements
// Operation (run it, describe it, its default timeout, its load-time
// checks) and registers itself once, by its key in the lab file.
//
// The package does not decode YAML, hold a lab's state or know about
// steps: the engine decodes, hands each operation a Checker at load time
// and an Env at run time, and records what happened.
package ops
