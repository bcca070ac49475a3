package prepare

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// The tests here write their session logs by hand with internal/logtest,
// as the reader's tests in sessionref/dshlog do, and find them through a title
// index built over the store.

// buildIndex builds the title index of s and fails the test on error.
func buildIndex(s *logtest.Store) *titles.Index {
	s.T.Helper()
	ix := titles.NewIndex(s.Root, titles.IndexOptions{Parallelism: 2})
	if err := ix.Build(context.Background(), nil); err != nil {
		s.T.Fatalf("Build: %v", err)
	}
	return ix
}

var bothEncodings = []layout.Encoding{layout.EncodingRaw, layout.EncodingZstd}

// wantCode fails the test unless err carries want.
func wantCode(t *testing.T, err error, want sessionref.Code) *sessionref.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var e *sessionref.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) carries no code, want %s", err, err, want)
	}
	if e.Code != want {
		t.Fatalf("code = %s (%v), want %s", e.Code, err, want)
	}
	return e
}
