package servertest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server die with the test process, even when that is killed.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
