package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A Predicate chooses a message the server wrote.
type Predicate func(Message) bool

// Await returns the first message, from the start of the connection, that
// pred accepts, waiting until one comes, the server's output ends, or ctx
// ends (DefaultTimeout when ctx has no deadline).
func (e *Editor) Await(ctx context.Context, pred Predicate) (Message, error) {
	return e.AwaitFrom(ctx, 0, pred)
}

// Mark is the number of messages received so far; AwaitFrom(Mark()) sees
// only what comes after.
func (e *Editor) Mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.base + len(e.log)
}

// Forget drops the messages before index upTo, so a long run (a storm of
// thousands of requests) does not hold every answer; Await and the other
// lookups no longer see them, and indices stay as Mark counts them.
func (e *Editor) Forget(upTo int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := min(upTo-e.base, len(e.log))
	if n <= 0 {
		return
	}
	clear(e.log[:n])
	e.log = e.log[n:]
	e.base += n
}

// Next returns the message at index i (waiting for it as AwaitFrom does):
// reading the server's output in order, one message after another.
func (e *Editor) Next(ctx context.Context, i int) (Message, error) {
	return e.AwaitFrom(ctx, i, func(Message) bool { return true })
}

// AwaitFrom is Await looking only at messages from index from on.
func (e *Editor) AwaitFrom(ctx context.Context, from int, pred Predicate) (Message, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for {
		e.mu.Lock()
		from = max(from, e.base)
		for i := from - e.base; i < len(e.log); i++ {
			if pred(e.log[i]) {
				m := e.log[i]
				e.mu.Unlock()
				return m, nil
			}
		}
		from = e.base + len(e.log)
		changed := e.changed
		done := isClosed(e.readDone)
		readErr := e.readErr
		e.mu.Unlock()
		if done {
			return Message{}, fmt.Errorf("the server's output ended (%v) without the awaited message", readErr)
		}
		select {
		case <-changed:
		case <-e.readDone:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("awaiting a message: %w", ctx.Err())
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Count is how many messages so far pred accepts.
func (e *Editor) Count(pred Predicate) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, m := range e.log {
		if pred(m) {
			n++
		}
	}
	return n
}

// Matching returns the messages so far that pred accepts, in order.
func (e *Editor) Matching(pred Predicate) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Message
	for _, m := range e.log {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// Notification accepts notifications of method.
func Notification(method string) Predicate {
	return func(m Message) bool { return m.IsNotification() && m.Method == method }
}

// ServerCall accepts server-to-client requests of method.
func ServerCall(method string) Predicate {
	return func(m Message) bool { return m.IsCall() && m.Method == method }
}

// Response accepts the response whose id is the JSON value id (`"a"`, `7`),
// alone or in a batch (the batch frame is then returned whole).
func Response(id string) Predicate {
	return func(m Message) bool {
		if m.Batch {
			for _, r := range m.Members {
				if r.IsResponse() && r.IDIs(id) {
					return true
				}
			}
			return false
		}
		return m.IsResponse() && m.IDIs(id)
	}
}

// Diagnostics is the params of textDocument/publishDiagnostics.
type Diagnostics struct {
	URI         string            `json:"uri"`
	Version     *int32            `json:"version"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

// DiagnosticsFor accepts diagnostics published for uri at version (any
// version when version < 0).
func DiagnosticsFor(uri string, version int32) Predicate {
	return func(m Message) bool {
		if !m.IsNotification() || m.Method != "textDocument/publishDiagnostics" {
			return false
		}
		var p Diagnostics
		if json.Unmarshal(m.Params, &p) != nil || p.URI != uri {
			return false
		}
		return version < 0 || (p.Version != nil && *p.Version == version)
	}
}

// LogMessage accepts window/logMessage notifications containing substr.
func LogMessage(substr string) Predicate { return messageContaining("window/logMessage", substr) }

// ShowMessage accepts window/showMessage notifications containing substr.
func ShowMessage(substr string) Predicate { return messageContaining("window/showMessage", substr) }

func messageContaining(method, substr string) Predicate {
	return func(m Message) bool {
		if !m.IsNotification() || m.Method != method {
			return false
		}
		var p struct {
			Message string `json:"message"`
		}
		return json.Unmarshal(m.Params, &p) == nil && strings.Contains(p.Message, substr)
	}
}

// Progress accepts $/progress notifications whose value has kind ("begin",
// "report", "end"; "" for any).
func Progress(kind string) Predicate {
	return func(m Message) bool {
		if !m.IsNotification() || m.Method != "$/progress" {
			return false
		}
		var p struct {
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		return json.Unmarshal(m.Params, &p) == nil && (kind == "" || p.Value.Kind == kind)
	}
}
