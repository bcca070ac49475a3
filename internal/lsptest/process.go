package lsptest

import (
	"fmt"
	"os/exec"
)

// Start starts cmd with its stdin and stdout as the editor's connection;
// cmd.Stderr is left to the caller. Close closes the process's stdin. The
// caller waits for cmd, after Done: exec closes stdout in Wait, so waiting
// earlier can cut frames the server wrote before it exited.
func Start(cmd *exec.Cmd, cfg Config) (*Editor, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin of %s: %w", cmd.Path, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout of %s: %w", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	return New(out, in, in, cfg), nil
}
