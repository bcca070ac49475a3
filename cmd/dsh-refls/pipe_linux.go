package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// outputPipeBytes is the capacity asked for the pipe the answers are
// written to: Linux's default for an unprivileged process at most
// (/proc/sys/fs/pipe-max-size).
const outputPipeBytes = 1 << 20

// growOutputPipe asks for outputPipeBytes of capacity for f when it is a
// pipe, and returns the capacity it has (0 when f is not a pipe). A pipe
// of 64 KiB, the default, woke the client 500 times for the 32 MB list of
// 100,000 sessions, each wakeup a round trip between the processes: the
// restart of issue 31, item 6 listed them 1.4× sooner with 1 MiB. A
// refusal (a lower system limit) leaves the pipe as it was.
func growOutputPipe(f *os.File) (int, error) {
	// Through SyscallConn, not Fd, which would put f in blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var size int
	var setErr error
	if err := rc.Control(func(fd uintptr) {
		if size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err != nil {
			size = 0 // not a pipe
			return
		}
		if size < outputPipeBytes {
			if grown, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, outputPipeBytes); err != nil {
				setErr = err
			} else {
				size = grown
			}
		}
	}); err != nil {
		return 0, nil
	}
	return size, setErr
}
