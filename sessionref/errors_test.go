package sessionref_test

import (
	"context"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestErrorText: an *Error reads as its code and message, then its cause.
func TestErrorText(t *testing.T) {
	if got := sessionref.Errorf(sessionref.CodeTooMany, "%d sessions", 4).Error(); got != "SESSION_REFERENCE_TOO_MANY: 4 sessions" {
		t.Errorf("without a cause: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := sessionref.Cancelled(ctx).Error(); got != "SESSION_REFERENCE_CANCELLED: the request was cancelled: context canceled" {
		t.Errorf("with a cause: %q", got)
	}
}
