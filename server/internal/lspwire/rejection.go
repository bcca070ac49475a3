package lspwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// checkMessage returns why a complete frame is not a JSON-RPC message or
// batch the connection can take, or nil when it is one. jsonrpc2 ends the
// connection on such a frame; the framing is intact, so the server answers
// it instead (JSON-RPC 2.0 §5.1: -32700 for invalid JSON, -32600 for
// valid JSON that is not a request).
func checkMessage(frame []byte, offset int64) *rejectedFrame {
	trimmed := bytes.TrimLeft(frame, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if _, err := jsonrpc2.ParseRequests(frame); err != nil {
			return rejectionOf(frame, err, nil, fmt.Sprintf("frame at offset %d is not a JSON-RPC batch", offset))
		}
		return nil
	}
	if _, err := jsonrpc2.DecodeMessage(frame); err != nil {
		// Answer under the request's id when it has one: any "method"
		// member marks a request, even one whose method is not a string.
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		var id json.RawMessage
		if json.Unmarshal(frame, &req) == nil && len(req.Method) > 0 && string(req.Method) != "null" && validID(req.ID) {
			id = bytes.Clone(req.ID)
		}
		return rejectionOf(frame, err, id, fmt.Sprintf("frame at offset %d is not a JSON-RPC message", offset))
	}
	return nil
}

// rejectionOf turns the decoding error of frame into its answer: -32700
// when the frame is not JSON, -32600 when it is JSON but not a request
// (jsonrpc2 reports a JSON value that is not an object as a parse error).
func rejectionOf(frame []byte, err error, id json.RawMessage, what string) *rejectedFrame {
	if !json.Valid(frame) {
		return &rejectedFrame{code: jsonrpc2.ParseError, msg: what + ": invalid JSON"}
	}
	reason := "not a valid request object"
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != jsonrpc2.ParseError {
		reason = rpcErr.Message
	}
	return &rejectedFrame{code: jsonrpc2.InvalidRequest, id: id, msg: what + ": " + reason}
}

// validID reports whether raw is a JSON-RPC id: a string or a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 || len(raw) > maxScannedIDBytes || !json.Valid(raw) {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// rejectedFrame is a frame that was read whole (the framing holds) but is
// not a message the connection can take. It is answered with code and msg
// under id (null when unknown), or only logged when silent (a skipped
// notification has no one to answer).
type rejectedFrame struct {
	code   jsonrpc2.Code
	id     json.RawMessage
	msg    string
	silent bool
}

// Error implements error.
func (r *rejectedFrame) Error() string { return r.msg }
