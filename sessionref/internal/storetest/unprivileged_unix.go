//go:build unix

package storetest

import (
	"os/exec"
	"syscall"
)

// runAsUser makes cmd run as uid (and the same gid).
func runAsUser(cmd *exec.Cmd, uid uint32) bool {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return true
}

// Mkfifo makes a named pipe at p.
func Mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
