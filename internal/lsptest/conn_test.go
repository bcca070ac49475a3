package lsptest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeServer is the server's end of a Conn under test: it reads what the
// Conn writes and writes frames for it to read, over io.Pipes.
type fakeServer struct {
	r  *bufio.Reader
	rc *io.PipeReader // under r
	w  *io.PipeWriter
}

// read reads one frame the Conn wrote and decodes its members.
func (s *fakeServer) read() (map[string]json.RawMessage, error) {
	body, err := ReadFrame(s.r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("the client wrote %s: %w", body, err)
	}
	return m, nil
}

// write writes one message to the Conn.
func (s *fakeServer) write(body string) error {
	_, err := s.w.Write(Frame([]byte(body)))
	return err
}

// connWatchdog bounds a test of Conn: a client and a server that both
// wait to read (a request the client did not answer) would otherwise wait
// until the test binary's timeout.
const connWatchdog = 30 * time.Second

// startConn connects a Conn to a fakeServer running script in a goroutine;
// the returned channel gives script's error once it returns. When script
// fails, or connWatchdog passes, or the test ends, the pipes are closed
// with that error, so neither side waits on the other any longer.
func startConn(t *testing.T, script func(s *fakeServer) error) (*Conn, <-chan error) {
	t.Helper()
	clientIn, serverOut := io.Pipe() // the server's stdout
	serverIn, clientOut := io.Pipe() // the server's stdin
	// Closing the writers ends every wait, and each side's reads then
	// return err.
	closeAll := func(err error) {
		_ = serverOut.CloseWithError(err)
		_ = clientOut.CloseWithError(err)
	}
	c := NewConn(clientOut, bufio.NewReader(clientIn))
	done, ended := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(ended)
		err := script(&fakeServer{r: bufio.NewReader(serverIn), rc: serverIn, w: serverOut})
		if err != nil {
			closeAll(fmt.Errorf("the fake server failed: %w", err))
		}
		done <- err
	}()
	watchdog := time.AfterFunc(connWatchdog, func() {
		closeAll(fmt.Errorf("client and server still waiting on each other after %v", connWatchdog))
	})
	t.Cleanup(func() {
		watchdog.Stop()
		closeAll(io.ErrClosedPipe)
		_, _ = clientIn.Close(), serverIn.Close()
		<-ended
	})
	return c, done
}

// wantMember checks that member k of m is the JSON text want.
func wantMember(m map[string]json.RawMessage, k, want string) error {
	if got, ok := m[k]; !ok || compact(got) != compact([]byte(want)) {
		return fmt.Errorf("%q of %v is %s (present: %v), want %s", k, keys(m), got, ok, want)
	}
	return nil
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestConnCallAnswersServerRequests has the server, before it answers,
// send two requests of its own (one under the very id of the pending
// call), a notification and an answer to another id: the call returns
// only the answer to its id, and the client answered each request with a
// null result under that request's id.
func TestConnCallAnswersServerRequests(t *testing.T) {
	c, peer := startConn(t, func(s *fakeServer) error {
		req, err := s.read()
		if err != nil {
			return err
		}
		for k, v := range map[string]string{"jsonrpc": `"2.0"`, "id": "1", "method": `"dsh/search"`, "params": `{"query":"<a&b>"}`} {
			if err := wantMember(req, k, v); err != nil {
				return fmt.Errorf("request: %w", err)
			}
		}
		for _, id := range []string{`1`, `"progress-7"`} {
			if err := s.write(`{"jsonrpc":"2.0","id":` + id + `,"method":"window/workDoneProgress/create","params":{"token":"t"}}`); err != nil {
				return err
			}
			got, err := s.read()
			if err != nil {
				return fmt.Errorf("the answer to the server's request %s: %w", id, err)
			}
			if err := wantMember(got, "id", id); err != nil {
				return err
			}
			if err := wantMember(got, "result", "null"); err != nil {
				return err
			}
			if _, ok := got["method"]; ok {
				return fmt.Errorf("the answer to the server's request %s has a method", id)
			}
		}
		for _, body := range []string{
			`{"jsonrpc":"2.0","method":"$/progress","params":{"token":"t","value":{"kind":"begin"}}}`,
			`{"jsonrpc":"2.0","id":2,"result":"not this one"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"hits":["s1"]}}`,
		} {
			if err := s.write(body); err != nil {
				return err
			}
		}
		// The second call has the next id.
		req, err = s.read()
		if err != nil {
			return err
		}
		if err := wantMember(req, "id", "2"); err != nil {
			return fmt.Errorf("second request: %w", err)
		}
		return s.write(`{"jsonrpc":"2.0","id":2,"result":[]}`)
	})
	before := time.Now()
	got, err := c.Call("dsh/search", map[string]any{"query": "<a&b>"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"hits":["s1"]}` {
		t.Errorf("Call returned %s, want the answer to id 1, {\"hits\":[\"s1\"]}", got)
	}
	if lb := c.LastByte(); lb.Before(before) || lb.After(time.Now()) {
		t.Errorf("LastByte %v is not within the call (from %v)", lb, before)
	}
	if rt := c.RoundTrip(); rt <= 0 || rt > time.Since(before) {
		t.Errorf("RoundTrip %v, want > 0 and at most the %v the call took", rt, time.Since(before))
	}
	if d := c.Decoded(); d < 0 || d > time.Since(c.LastByte()) {
		t.Errorf("Decoded %v, want between 0 and the %v since the last byte", d, time.Since(c.LastByte()))
	}
	if got, err := c.Call("dsh/status", nil); err != nil || string(got) != "[]" {
		t.Errorf("second Call = %s, %v; want [], nil", got, err)
	}
	if err := <-peer; err != nil {
		t.Fatal("server:", err)
	}
}

// TestConnErrorAnswer: an error answer is an error naming the method, the
// code and the message, and wrapping the *Error.
func TestConnErrorAnswer(t *testing.T) {
	c, peer := startConn(t, func(s *fakeServer) error {
		if _, err := s.read(); err != nil {
			return err
		}
		return s.write(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: dsh/nothing"}}`)
	})
	got, err := c.Call("dsh/nothing", map[string]any{})
	if err == nil {
		t.Fatalf("Call returned %s and no error", got)
	}
	for _, want := range []string{"dsh/nothing", "-32601", "method not found: dsh/nothing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeMethodNotFound {
		t.Errorf("error %v does not wrap an *Error with code %d", err, CodeMethodNotFound)
	}
	if err := <-peer; err != nil {
		t.Fatal("server:", err)
	}
}

// TestConnNotify: a notification has the method and params and no id.
func TestConnNotify(t *testing.T) {
	c, peer := startConn(t, func(s *fakeServer) error {
		m, err := s.read()
		if err != nil {
			return err
		}
		if _, ok := m["id"]; ok {
			return fmt.Errorf("the notification has an id: %v", m)
		}
		if err := wantMember(m, "method", `"initialized"`); err != nil {
			return err
		}
		return wantMember(m, "params", `{}`)
	})
	if err := c.Notify("initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := <-peer; err != nil {
		t.Fatal("server:", err)
	}
}

// TestConnClosed: a server whose output ends, between frames or inside
// one, and a server that no longer reads, make Call return an error, not
// wait.
func TestConnClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(s *fakeServer) error
		want   string
	}{
		{"output ends", func(s *fakeServer) error {
			if _, err := s.read(); err != nil {
				return err
			}
			return s.w.Close()
		}, "EOF"},
		{"output ends inside a frame", func(s *fakeServer) error {
			if _, err := s.read(); err != nil {
				return err
			}
			if _, err := io.WriteString(s.w, "Content-Length: 40\r\n\r\n{\"jsonrpc\""); err != nil {
				return err
			}
			return s.w.Close()
		}, "unexpected EOF"},
		{"input closed", func(s *fakeServer) error {
			return s.rc.Close()
		}, "closed pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, peer := startConn(t, tc.script)
			// A Call that waited on would end at the watchdog, with an
			// error that names neither.
			_, err := c.Call("dsh/status", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dsh/status") {
				t.Errorf("Call error %v, want one naming dsh/status and %q", err, tc.want)
			}
			if err := <-peer; err != nil {
				t.Fatal("server:", err)
			}
		})
	}
}

// TestProcStat reads this test process's own figures.
func TestProcStat(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc:", err)
	}
	pid := os.Getpid()
	rss, err := ProcStatusKB(pid, "VmRSS")
	if err != nil || rss <= 0 {
		t.Errorf("ProcStatusKB(VmRSS) = %d, %v; want > 0", rss, err)
	}
	hwm, err := ProcStatusKB(pid, "VmHWM")
	if err != nil || hwm < rss {
		t.Errorf("ProcStatusKB(VmHWM) = %d, %v; want ≥ VmRSS %d", hwm, err, rss)
	}
	if _, err := ProcStatusKB(pid, "NoSuchField"); err == nil {
		t.Error("ProcStatusKB of a missing field gave no error")
	}
	if _, err := ProcCPU(pid); err != nil {
		t.Errorf("ProcCPU: %v", err)
	}
	if _, err := ProcCPU(-1); err == nil {
		t.Error("ProcCPU(-1) gave no error")
	}
}
