package lspwire

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Trace directions.
const (
	directionSend    = "send"
	directionReceive = "receive"
)

// tracer writes the JSON-lines trace of §4.3, which LSP inspectors load.
// A nil tracer records nothing.
type tracer struct {
	mu sync.Mutex
	w  io.Writer
}

// newTracer returns a tracer writing to w, or nil when w is nil.
func newTracer(w io.Writer) *tracer {
	if w == nil {
		return nil
	}
	return &tracer{w: w}
}

// traceLine is one line of the trace.
type traceLine struct {
	IsLSPMessage bool            `json:"isLSPMessage"`
	Type         string          `json:"type"`
	Message      json.RawMessage `json:"message"`
	Timestamp    int64           `json:"timestamp"`
}

func (t *tracer) record(direction string, msg []byte, isRequest, isNotification bool) {
	if t == nil {
		return
	}
	kind := "response"
	switch {
	case isRequest:
		kind = "request"
	case isNotification:
		kind = "notification"
	}
	if !json.Valid(msg) {
		msg, _ = json.Marshal(string(msg))
	}
	line, err := json.Marshal(traceLine{
		IsLSPMessage: true,
		Type:         direction + "-" + kind,
		Message:      json.RawMessage(msg),
		Timestamp:    time.Now().UnixMilli(),
	})
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(append(line, '\n'))
}
