package sessionref

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// This file holds the helpers the store, log, index, retention and prepare
// tests share: they write dsh session logs by hand into t.TempDir() stores
// laid out as SPEC §1.1 says, raw or as zstd frames.

// The log-writing helpers live in internal/logtest, which the tests of
// sessionref/prepare share; these are the names the tests here use.

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
	writeLog           = logtest.WriteLog
	flatten            = logtest.Flatten
	rawLines           = logtest.RawLines
	zstdFrame          = logtest.ZstdFrame
	appendFrame        = logtest.AppendFrame
	zstdLog            = logtest.ZstdLog
	appendFile         = logtest.AppendFile
	corruptFrame       = logtest.CorruptFrame
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

// descriptorEvent is a subagent descriptor; a nil label leaves it out.
func descriptorEvent(seq int64, version int, label *string) string {
	d := map[string]any{"version": version, "mode": "one-shot", "provider": "p"}
	if label != nil {
		d["label"] = *label
	}
	return eventLine(typeDescriptor, seq, d, "")
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

// sessionDir returns where dsh keeps the session of h.
func (s *testStore) sessionDir(h headerSpec) string { return s.store().SessionDir(h) }

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

// catalogEvent is a parent's catalog record listing child under label.
func catalogEvent(seq int64, child, label string) string {
	return eventLine(typeCatalog, seq, map[string]any{"version": 0, "childId": child, "childCreatedAt": 0, "mode": "one-shot", "label": label}, "")
}

// v4 writes a raw generation-4 session in /p with the given events and
// returns its log path.
func (s *testStore) v4(id, parent string, created int64, events ...string) string {
	s.t.Helper()
	return s.write(sessionSpec{Header: headerSpec{ID: id, Cwd: "/p", HasCwd: true, CreatedAt: created, Version: 4, Parent: parent},
		Encoding: EncodingRaw, Generation: 4, Batches: [][]string{events}})
}

// listedFamily writes the sessions whose listing a restored search text
// can get wrong: a child listed under its parent's catalog label ("Zebra
// label") and the id "twice" in /a and /b. It returns the parent's log
// and the second "twice" log.
func (s *testStore) listedFamily() (parent, twiceSecond string) {
	s.t.Helper()
	parent = s.v4("parent", "", fixtureTime, titleEvent(0, "Parent title"), catalogEvent(1, "child", "Zebra label"))
	s.v4("child", "parent", fixtureTime+1, titleEvent(0, "Child own title"))
	s.simple("twice", "/a", fixtureTime+2, titleEvent(0, "Twice one"))
	twiceSecond = s.simple("twice", "/b", fixtureTime+3, titleEvent(0, "Twice two"))
	return parent, twiceSecond
}

// answersOf is the ids each query lists in snap.
func answersOf(t *testing.T, snap *Snapshot, queries []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, q := range queries {
		got, _, err := snap.Candidates(CandidateQuery{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		out[q] = candidateIDs(got)
	}
	return out
}

// index builds an index over the store and fails the test on error.
func (s *testStore) index() *Index {
	s.t.Helper()
	ix := NewIndex(s.root, IndexOptions{Parallelism: 2})
	if err := ix.Build(context.Background(), nil); err != nil {
		s.t.Fatalf("Build: %v", err)
	}
	return ix
}
