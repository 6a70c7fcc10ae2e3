// Package repo holds checks of the repository itself, run with the tests:
// the module is tidy.
package repo
