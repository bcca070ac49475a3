package lsptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Message is one frame the server wrote. A request or notification has a
// Method; a response has an ID and a Result or an Error. A frame that is a
// JSON array (a batch answer) has Batch set and its members in Members.
type Message struct {
	// Raw is the frame's body exactly as the server wrote it.
	Raw json.RawMessage `json:"-"`
	// Index is the frame's place in the server's output (0 first), as
	// Mark counts; Received is when the editor read it.
	Index    int       `json:"-"`
	Received time.Time `json:"-"`
	// Batch is set when the frame is a JSON array; Members holds its
	// elements and the other fields are empty.
	Batch   bool      `json:"-"`
	Members []Message `json:"-"`

	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// IsNotification reports whether m is a notification from the server.
func (m Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// IsCall reports whether m is a request from the server to the client.
func (m Message) IsCall() bool { return m.Method != "" && len(m.ID) > 0 }

// IsResponse reports whether m answers a request of the client.
func (m Message) IsResponse() bool { return !m.Batch && m.Method == "" }

// IDIs reports whether m's id is the JSON value id (compared after
// compacting, so `"a"` matches "a" written with any spacing).
func (m Message) IDIs(id string) bool { return compact(m.ID) == compact([]byte(id)) }

// DecodeParams decodes m's params into v.
func (m Message) DecodeParams(v any) error {
	if err := json.Unmarshal(m.Params, v); err != nil {
		return fmt.Errorf("params of %s: %w", m.Method, err)
	}
	return nil
}

// DecodeResult decodes m's result into v, or returns m's error.
func (m Message) DecodeResult(v any) error {
	if m.Error != nil {
		return m.Error
	}
	if v == nil {
		return nil
	}
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], m.Result...)
		return nil
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		return fmt.Errorf("result %.200s: %w", m.Result, err)
	}
	return nil
}

// Error is a JSON-RPC error object, from the server or for it.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error: the message alone, as go.lsp.dev/jsonrpc2 says
// it, so a test can check the text a user sees; Code and Data are fields.
func (e *Error) Error() string { return e.Message }

// The JSON-RPC and LSP error codes the editor itself uses.
const (
	CodeMethodNotFound   = -32601
	CodeRequestCancelled = -32800
)

// parseMessage decodes one frame body, in one pass over it when it is a
// message object; ok is false when the body is not JSON at all. A body
// that is JSON but not a message object (a number, a string) is kept with
// only Raw set.
func parseMessage(body json.RawMessage) (Message, bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		m := Message{Raw: body, Batch: true}
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) != nil {
			return m, json.Valid(body)
		}
		for _, e := range elems {
			member, _ := parseMessage(e)
			m.Members = append(m.Members, member)
		}
		return m, true
	}
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		// A JSON value of another shape, or no JSON.
		m = Message{}
		if !json.Valid(body) {
			return Message{Raw: body}, false
		}
	}
	m.Raw = body
	return m, true
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
