// Package cli holds the one definition of the job flags: the flags that set job-file keys, shared by
// `hfload run`, `analyze`, `plan` and `validate` (cmd/hfload) and `hfload-beam`, and the loading of a job
// from a job file, --set and those flags.
package cli
