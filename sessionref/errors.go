package sessionref

import (
	"context"
	"errors"
	"fmt"
)

// Code is one of the exact error codes of the contract. Hosts match on it.
type Code string

// The error codes. Their spelling is part of the wire contract.
const (
	CodeInvalidConfig    Code = "SESSION_REFERENCE_INVALID_CONFIG"
	CodeInvalidReference Code = "SESSION_REFERENCE_INVALID_REFERENCE"
	CodeSelfReference    Code = "SESSION_REFERENCE_SELF_REFERENCE"
	CodeTooMany          Code = "SESSION_REFERENCE_TOO_MANY"
	CodeReadFailed       Code = "SESSION_REFERENCE_READ_FAILED"
	CodeBudgetExceeded   Code = "SESSION_REFERENCE_BUDGET_EXCEEDED"
	CodeCancelled        Code = "SESSION_REFERENCE_CANCELLED"
)

// AllCodes lists every code, in the order the contract names them.
var AllCodes = []Code{
	CodeInvalidConfig, CodeInvalidReference, CodeSelfReference, CodeTooMany,
	CodeReadFailed, CodeBudgetExceeded, CodeCancelled,
}

// Error is a failure that carries a contract code. SessionID names the
// session the failure concerns, when there is one.
type Error struct {
	Code      Code
	Message   string
	SessionID string
	Err       error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Cancelled is the CANCELLED error of a request whose ctx ended.
func Cancelled(ctx context.Context) *Error {
	return &Error{Code: CodeCancelled, Message: "the request was cancelled", Err: ctx.Err()}
}

// CodeOf returns the contract code carried by err, or "" when it carries none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
