// Package version says which build of hfload is running, for `hfload --version` and every manifest's
// tool_version: the version stamped at link time (the Makefile passes -ldflags), else what the go
// command recorded in the binary's build information.
package version
