package lsptest

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
)

// outBufferSize is the buffer of Pipes.Out: a completion list or a
// candidates answer (tens of KB) is read in one system call, a snapshot of
// a few hundred KB in a few.
const outBufferSize = 1 << 20

// Pipes are a client's ends of a server process's stdin and stdout.
type Pipes struct {
	// In writes to the process's stdin; closing it ends the server's input.
	In io.WriteCloser
	// Out reads the process's stdout, buffered, for ReadFrame.
	Out *bufio.Reader
}

// StartPipes starts cmd with pipes to its stdin and stdout; cmd.Stderr is
// left to the caller. The caller waits for cmd after reading stdout to its
// end: exec closes stdout in Wait, so waiting earlier can cut frames the
// server wrote before it exited.
func StartPipes(cmd *exec.Cmd) (Pipes, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return Pipes{}, fmt.Errorf("stdin of %s: %w", cmd.Path, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Pipes{}, fmt.Errorf("stdout of %s: %w", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return Pipes{}, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	return Pipes{In: in, Out: bufio.NewReaderSize(out, outBufferSize)}, nil
}

// Start starts cmd with its stdin and stdout as the editor's connection
// (StartPipes); cmd.Stderr is left to the caller. Close closes the
// process's stdin. The caller waits for cmd, after Done: exec closes stdout
// in Wait, so waiting earlier can cut frames the server wrote before it
// exited.
func Start(cmd *exec.Cmd, cfg Config) (*Editor, error) {
	p, err := StartPipes(cmd)
	if err != nil {
		return nil, err
	}
	return New(p.Out, p.In, p.In, cfg), nil
}
