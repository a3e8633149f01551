//go:build unix

package browser

import (
	"os/exec"
	"syscall"
)

// newGroup starts chromium in a process group of its own, so that killGroup
// reaches its renderer, GPU and crash-handler processes too.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills every process of the group chromium leads.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
