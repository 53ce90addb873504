//go:build !linux

package servertest

import "os/exec"

// dieWithParent: only Linux can tie a child's life to its parent's; elsewhere Stop ends the gateway.
func dieWithParent(cmd *exec.Cmd) {}
