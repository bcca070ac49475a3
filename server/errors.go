package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// JSON-RPC error codes the server answers with. The contract (§2.4) fixes
// the string codes carried in the error's data member; the numeric codes
// below are this server's choice inside the implementation-defined range
// -32099…-32000, one per contract code, so a host can switch on either:
//
//	-32010  SESSION_REFERENCE_INVALID_CONFIG
//	-32011  SESSION_REFERENCE_INVALID_REFERENCE
//	-32012  SESSION_REFERENCE_SELF_REFERENCE
//	-32013  SESSION_REFERENCE_TOO_MANY
//	-32014  SESSION_REFERENCE_READ_FAILED
//	-32015  SESSION_REFERENCE_BUDGET_EXCEEDED
//	-32800  SESSION_REFERENCE_CANCELLED (LSP RequestCancelled)
//
// Protocol-level failures keep their standard codes: -32002 before
// initialize, -32600 after shutdown, -32601 unknown method, -32602 params
// that do not decode, -32603 an internal failure (including a recovered
// panic).
const (
	CodeInvalidConfig    jsonrpc2.Code = -32010
	CodeInvalidReference jsonrpc2.Code = -32011
	CodeSelfReference    jsonrpc2.Code = -32012
	CodeTooMany          jsonrpc2.Code = -32013
	CodeReadFailed       jsonrpc2.Code = -32014
	CodeBudgetExceeded   jsonrpc2.Code = -32015
	// CodeRequestCancelled is LSP's RequestCancelled.
	CodeRequestCancelled jsonrpc2.Code = -32800
)

// rpcCodes maps each contract code to its numeric JSON-RPC code.
var rpcCodes = map[sessionref.Code]jsonrpc2.Code{
	sessionref.CodeInvalidConfig:    CodeInvalidConfig,
	sessionref.CodeInvalidReference: CodeInvalidReference,
	sessionref.CodeSelfReference:    CodeSelfReference,
	sessionref.CodeTooMany:          CodeTooMany,
	sessionref.CodeReadFailed:       CodeReadFailed,
	sessionref.CodeBudgetExceeded:   CodeBudgetExceeded,
	sessionref.CodeCancelled:        CodeRequestCancelled,
}

// RPCCode returns the numeric JSON-RPC code for a contract code.
func RPCCode(c sessionref.Code) jsonrpc2.Code {
	if n, ok := rpcCodes[c]; ok {
		return n
	}
	return jsonrpc2.InternalError
}

// ErrorData is the data member of a contract error on the wire.
type ErrorData struct {
	Code      sessionref.Code `json:"code"`
	SessionID string          `json:"sessionId,omitempty"`
	Field     string          `json:"field,omitempty"`
}

// configError is an invalid configuration value, naming the field.
type configError struct {
	Field string
	Msg   string
}

// Error implements error.
func (e *configError) Error() string {
	return fmt.Sprintf("%s: invalid %s: %s", sessionref.CodeInvalidConfig, e.Field, e.Msg)
}

// toRPCError converts a handler error to the JSON-RPC error sent on the wire:
// contract errors get their code and data, a cancelled context becomes
// RequestCancelled with the CANCELLED code, wire errors pass through, and
// anything else is an internal error.
func toRPCError(ctx context.Context, err error) *jsonrpc2.Error {
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		return wire
	}
	var cfg *configError
	if errors.As(err, &cfg) {
		return withData(jsonrpc2.NewError(CodeInvalidConfig, render.ErrorText(err)),
			ErrorData{Code: sessionref.CodeInvalidConfig, Field: cfg.Field})
	}
	var serr *sessionref.Error
	if errors.As(err, &serr) {
		return withData(jsonrpc2.NewError(RPCCode(serr.Code), render.ErrorText(err)),
			ErrorData{Code: serr.Code, SessionID: serr.SessionID})
	}
	if errors.Is(err, context.Canceled) || (ctx != nil && ctx.Err() != nil) {
		return cancelledError()
	}
	return jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
}

// cancelledError is the answer to a cancelled request.
func cancelledError() *jsonrpc2.Error {
	return withData(jsonrpc2.NewError(CodeRequestCancelled, "request cancelled"),
		ErrorData{Code: sessionref.CodeCancelled})
}

// withData attaches data to e.
func withData(e *jsonrpc2.Error, data ErrorData) *jsonrpc2.Error {
	raw, err := json.Marshal(data)
	if err == nil {
		e.Data = raw
	}
	return e
}

// invalidParams answers a request whose params do not decode.
func invalidParams(method string, err error) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid params: %v", method, err)
}
