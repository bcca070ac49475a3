package dshlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// This file holds the helpers the store and log tests share: they write
// dsh session logs by hand into t.TempDir() stores laid out as SPEC §1.1
// says, raw or as zstd frames.

// The log-writing helpers live in internal/logtest, which the tests of
// sessionref/titles and sessionref/prepare share; these are the names the
// tests here use.

const fixtureTime = logtest.FixtureTime

type (
	headerSpec  = logtest.Header
	sessionSpec = logtest.Spec
)

const opAppend = logtest.OpAppend

var (
	headerLine         = logtest.HeaderLine
	jsonText           = logtest.JSONText
	eventLine          = logtest.EventLine
	textBlocks         = logtest.TextBlocks
	userMsg            = logtest.UserMsg
	userMsgFrom        = logtest.UserMsgFrom
	checkpointMsg      = logtest.CheckpointMsg
	assistantMsg       = logtest.AssistantMsg
	assistantMsgBlocks = logtest.AssistantMsgBlocks
	titleEvent         = logtest.TitleEvent
	turnEnd            = logtest.TurnEnd
	logName            = logtest.LogName
	flatten            = logtest.Flatten
	rawLines           = logtest.RawLines
	zstdFrame          = logtest.ZstdFrame
	appendFrame        = logtest.AppendFrame
	zstdLog            = logtest.ZstdLog
	corruptFrame       = logtest.CorruptFrame
	incompressible     = logtest.Incompressible
)

// sourced adds sourceEventSeqs to an event line: a replacing event must
// name every surface node it shadows (dsh's SurfaceOp rule).
func sourced(line string, seqs ...int64) string {
	return strings.TrimSuffix(line, "}") + `,"sourceEventSeqs":` + jsonText(seqs) + "}"
}

// opReplace is a v0–v2 replace surface op.
func opReplace(start, end int64) string {
	return fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, start, end)
}

// opReplaceSeq is the v3 spelling of a replace surface op.
func opReplaceSeq(start, end int64) string {
	return fmt.Sprintf(`{"op":"replace","startSeq":%d,"endSeq":%d}`, start, end)
}

// testStore is a sessions root under t.TempDir().
type testStore struct {
	t    *testing.T
	root string
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	return &testStore{t: t, root: logtest.NewStore(t).Root}
}

// store is s as logtest writes into it.
func (s *testStore) store() *logtest.Store { return &logtest.Store{T: s.t, Root: s.root} }

// write writes a session and returns its log path.
func (s *testStore) write(spec sessionSpec) string {
	s.t.Helper()
	return s.store().Write(spec)
}

// simple writes a raw v0 session with the given events in one batch.
func (s *testStore) simple(id, cwd string, created int64, events ...string) string {
	s.t.Helper()
	return s.store().Simple(id, cwd, created, events...)
}
