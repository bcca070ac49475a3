package titles

import (
	"context"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// This file holds the helpers the index, candidate, scope and cache tests
// share: they write dsh session logs by hand (internal/logtest) into
// t.TempDir() stores laid out as SPEC §1.1 says, and index them.

const fixtureTime = logtest.FixtureTime

type (
	headerSpec  = logtest.Header
	sessionSpec = logtest.Spec
)

const opAppend = logtest.OpAppend

var (
	headerLine      = logtest.HeaderLine
	jsonText        = logtest.JSONText
	eventLine       = logtest.EventLine
	textBlocks      = logtest.TextBlocks
	userMsg         = logtest.UserMsg
	assistantMsg    = logtest.AssistantMsg
	titleEvent      = logtest.TitleEvent
	turnEnd         = logtest.TurnEnd
	writeLog        = logtest.WriteLog
	zstdFrame       = logtest.ZstdFrame
	zstdLog         = logtest.ZstdLog
	appendFile      = logtest.AppendFile
	corruptFrame    = logtest.CorruptFrame
	descriptorEvent = logtest.DescriptorEvent
	catalogEvent    = logtest.CatalogEvent
	incompressible  = logtest.Incompressible
)

// bothEncodings are the two ways dsh writes a log.
var bothEncodings = []layout.Encoding{layout.EncodingRaw, layout.EncodingZstd}

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

// v4 writes a raw generation-4 session in /p with the given events and
// returns its log path.
func (s *testStore) v4(id, parent string, created int64, events ...string) string {
	s.t.Helper()
	return s.write(sessionSpec{Header: headerSpec{ID: id, Cwd: "/p", HasCwd: true, CreatedAt: created, Version: 4, Parent: parent},
		Encoding: layout.EncodingRaw, Generation: 4, Batches: [][]string{events}})
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
