package storetest

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// OpenWatch reports opens of watched paths through inotify.
type OpenWatch struct {
	fd    int
	paths map[int32]string
}

// inotifyBuffer holds many events; the watched paths see few.
const inotifyBuffer = 64 << 10

// WatchOpens starts reporting opens and reads of paths.
func WatchOpens(t *testing.T, paths []string) *OpenWatch {
	t.Helper()
	if len(paths) == 0 {
		t.Fatal("nothing to watch")
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	w := &OpenWatch{fd: fd, paths: map[int32]string{}}
	t.Cleanup(func() { syscall.Close(fd) })
	for _, p := range paths {
		wd, err := syscall.InotifyAddWatch(fd, p, syscall.IN_OPEN|syscall.IN_ACCESS)
		if err != nil {
			t.Fatalf("watching %s: %v", p, err)
		}
		w.paths[int32(wd)] = p
	}
	return w
}

// Drain returns the paths opened or read since the last drain.
func (w *OpenWatch) Drain(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, inotifyBuffer)
	for {
		n, err := syscall.Read(w.fd, buf)
		if errors.Is(err, syscall.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("reading inotify events: %v", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+nameLen]), "\x00")
			off += syscall.SizeofInotifyEvent + nameLen
			if mask&(syscall.IN_OPEN|syscall.IN_ACCESS) == 0 {
				continue
			}
			out = append(out, filepath.Join(w.paths[wd], name))
		}
	}
}

// Control proves the watch can see an open: reading path must be reported.
func (w *OpenWatch) Control(t *testing.T, path string) {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		if _, err := os.ReadDir(path); err != nil {
			t.Fatalf("control read of %s: %v", path, err)
		}
	}
	if got := w.Drain(t); len(got) == 0 {
		t.Fatalf("the open watch missed a read of %s; the confinement check proves nothing", path)
	}
}
