//go:build !unix

package storetest

import (
	"errors"
	"os/exec"
)

// runAsUser cannot switch users here.
func runAsUser(*exec.Cmd, uint32) bool { return false }

// Mkfifo: there are no named pipes in the file system here (Windows pipes
// live under \\.\pipe\, never where a log is).
func Mkfifo(string) error { return errors.ErrUnsupported }
