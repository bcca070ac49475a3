//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side, read by the
// test, and the terminal side, given to the binary as its stderr.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		t.Skipf("opening /dev/pts/%d: %v", n, err)
	}
	return ptmx, tty
}

// searchOnTerminal runs `search` with stderr on a pseudo-terminal and
// returns stdout, what the terminal received and the exit code.
func searchOnTerminal(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ptmx, tty := openPTY(t)
	defer ptmx.Close()
	cmd := exec.Command(binary, append([]string{"search"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds the terminal now
	received := make(chan []byte)
	go func() {
		// Reading ends with EIO once the child has closed the terminal.
		b, _ := io.ReadAll(ptmx)
		received <- b
	}()
	err := cmd.Wait()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-received:
		return stdout.String(), string(b), code
	case <-time.After(abuseTimeout):
		t.Fatal("the terminal was never closed")
	}
	return "", "", 0
}

// TestCLISearchProgressOnATerminal: with stderr a terminal, `search` draws
// the title index and then the recall index as bars on one line, and
// blanks that line at the end; stdout is the JSON result alone; --quiet
// draws nothing.
func TestCLISearchProgressOnATerminal(t *testing.T) {
	root := t.TempDir()
	const n = 40
	for i := range n {
		s := dshgen.NewSession(fmt.Sprintf("s-%02d", i)).Cwd("/w").CreatedAt(int64(1000 + i)).
			UserText(fmt.Sprintf("message %d about the token bucket", i)).AssistantText("ok")
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	out, term, code := searchOnTerminal(t, "--sessions-root", root, "--limit", "100", "token", "bucket")
	var hits []cliHit
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != n {
		t.Fatalf("exit %d, %d hits (%v); stdout:\n%s\nterminal:\n%q", code, len(hits), err, out, term)
	}
	if strings.Contains(out, "[#") || strings.Contains(out, "\r") {
		t.Errorf("the bar reached stdout: %q", out)
	}
	title := strings.Index(term, "indexing sessions [")
	body := strings.Index(term, "reading what was said [")
	if title < 0 || body < title || !strings.Contains(term, fmt.Sprintf("] %d/%d", n, n)) {
		t.Errorf("terminal got %q: want the title bar, then the recall bar, each to %d/%d", term, n, n)
	}
	// The last thing drawn blanks the line: nothing is left but spaces.
	last := term[strings.LastIndex(strings.TrimSuffix(term, "\r"), "\r")+1:]
	if strings.TrimRight(last, " \r") != "" || !strings.HasSuffix(term, "\r") {
		t.Errorf("the bar is left on the terminal: ends %q", term[max(0, len(term)-80):])
	}

	out, term, code = searchOnTerminal(t, "--sessions-root", root, "--quiet", "token", "bucket")
	if code != 0 || term != "" || json.Unmarshal([]byte(out), &hits) != nil {
		t.Errorf("--quiet: exit %d, terminal %q", code, term)
	}
}
