//go:build unix

package sessionref_test

import (
	"os/exec"
	"syscall"
)

// runAsUser makes cmd run as uid (and the same gid).
func runAsUser(cmd *exec.Cmd, uid uint32) bool {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return true
}

// mkfifo makes a named pipe at p.
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
