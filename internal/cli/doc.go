// Package cli holds the job flags of `hfload run` for commands outside cmd/hfload that take the same
// job files and flags (cmd/hfload-beam). A test keeps the list equal to cmd/hfload's.
package cli
