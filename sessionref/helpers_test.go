package sessionref

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// This file holds the helpers the store, log, index, retention and prepare
// tests share: they write dsh session logs by hand into t.TempDir() stores
// laid out as SPEC §1.1 says, raw or as zstd frames.

// fixtureTime is the createdAt of the first session a test writes; later
// sessions count up from it so that newest-first order is predictable.
const fixtureTime int64 = 1783352113760

// headerSpec describes line 1 of a log.
type headerSpec struct {
	ID        string
	Cwd       string
	HasCwd    bool
	Version   int
	CreatedAt int64
	// Parent, when set, is the parentSession of a subagent child.
	Parent string
}

// headerLine writes the header line of §1.3.
func headerLine(h headerSpec) string {
	m := map[string]any{
		"type":            "session",
		"version":         h.Version,
		"id":              h.ID,
		"createdAt":       h.CreatedAt,
		"delegationDepth": 0,
	}
	if h.HasCwd {
		m["cwd"] = h.Cwd
	}
	if h.Version >= 4 {
		m["isSeeded"] = false // required from v4 on (§1.7)
	}
	if h.Parent != "" {
		m["parentSession"], m["origin"], m["delegationDepth"] = h.Parent, "subagent", 1
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonText marshals v for embedding in a hand-written event line.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// eventLine writes an event the way dsh does: type first, then seq.
// surfaceOp is raw JSON ("" leaves it out).
func eventLine(typ string, seq int64, data any, surfaceOp string) string {
	s := fmt.Sprintf(`{"type":%s,"seq":%d,"time":%d,"data":%s`, jsonText(typ), seq, fixtureTime+seq, jsonText(data))
	if surfaceOp != "" {
		s += `,"surfaceOp":` + surfaceOp
	}
	return s + "}"
}

const opAppend = `"append"`

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

func textBlocks(texts ...string) []map[string]any {
	out := make([]map[string]any, 0, len(texts))
	for _, t := range texts {
		out = append(out, map[string]any{"type": "text", "text": t})
	}
	return out
}

// userMsg is a direct human prompt.
func userMsg(seq int64, text string) string {
	return userMsgFrom(seq, map[string]any{"kind": "user"}, textBlocks(text))
}

// userMsgFrom is a user message with the given source and content blocks.
func userMsgFrom(seq int64, source map[string]any, content any) string {
	return eventLine(typeUserMessage, seq, map[string]any{
		"content": content, "source": source, "role": "user", "id": fmt.Sprintf("msg-%d", seq),
	}, opAppend)
}

// checkpointMsg is a compaction checkpoint (§1.4).
func checkpointMsg(seq int64, text string) string {
	return userMsgFrom(seq, map[string]any{"kind": "plugin", "plugin": "compact", "compactionId": "c1"}, textBlocks(text))
}

// assistantMsg is a v0 assistant message with the message wrapper.
func assistantMsg(seq int64, text string) string {
	return assistantMsgBlocks(seq, textBlocks(text))
}

func assistantMsgBlocks(seq int64, content any) string {
	return eventLine(typeAssistantMessage, seq, map[string]any{
		"turn": 1, "step": 1,
		"message": map[string]any{"id": fmt.Sprintf("a-%d", seq), "role": "assistant", "content": content,
			"source": map[string]any{"kind": "model"}},
	}, opAppend)
}

func titleEvent(seq int64, title string) string {
	return eventLine(typeTitle, seq, map[string]any{"title": title, "messageSeqs": []int{0}, "source": map[string]any{"kind": "provider"}}, "")
}

func turnEnd(seq int64) string {
	return eventLine(typeTurnEnd, seq, map[string]any{"turn": 1}, "")
}

// descriptorEvent is a subagent descriptor; a nil label leaves it out.
func descriptorEvent(seq int64, version int, label *string) string {
	d := map[string]any{"version": version, "mode": "one-shot", "provider": "p"}
	if label != nil {
		d["label"] = *label
	}
	return eventLine(typeDescriptor, seq, d, "")
}

// sessionSpec is one session to write into a test store.
type sessionSpec struct {
	headerSpec
	// Encoding is EncodingRaw or EncodingZstd.
	Encoding Encoding
	// Generation 0 writes session.jsonl[.zstd], N writes session.vN.jsonl[.zstd].
	Generation int
	// Batches are the event lines after the header; for zstd each batch
	// is one frame.
	Batches [][]string
}

// testStore is a sessions root under t.TempDir().
type testStore struct {
	t    *testing.T
	root string
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return &testStore{t: t, root: root}
}

// sessionDir returns where dsh keeps the session of h.
func (s *testStore) sessionDir(h headerSpec) string {
	return filepath.Join(s.root, dshlog.ProjectDir(h.Cwd, h.HasCwd), dshlog.EncodeSegment(h.ID))
}

// logName is the file name of a generation in an encoding.
func logName(gen int, enc Encoding) string {
	name := "session"
	if gen > 0 {
		name += fmt.Sprintf(".v%d", gen)
	}
	name += ".jsonl"
	if enc == EncodingZstd {
		name += ".zstd"
	}
	return name
}

// write writes a session and returns its log path.
func (s *testStore) write(spec sessionSpec) string {
	s.t.Helper()
	dir := s.sessionDir(spec.headerSpec)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(dir, logName(spec.Generation, spec.Encoding))
	writeLog(s.t, path, spec.Encoding, headerLine(spec.headerSpec), spec.Batches)
	return path
}

// simple writes a raw v0 session with the given events in one batch.
func (s *testStore) simple(id, cwd string, created int64, events ...string) string {
	s.t.Helper()
	return s.write(sessionSpec{
		headerSpec: headerSpec{ID: id, Cwd: cwd, HasCwd: cwd != "", CreatedAt: created},
		Encoding:   EncodingRaw, Batches: [][]string{events},
	})
}

// catalogEvent is a parent's catalog record listing child under label.
func catalogEvent(seq int64, child, label string) string {
	return eventLine(typeCatalog, seq, map[string]any{"version": 0, "childId": child, "childCreatedAt": 0, "mode": "one-shot", "label": label}, "")
}

// v4 writes a raw generation-4 session in /p with the given events and
// returns its log path.
func (s *testStore) v4(id, parent string, created int64, events ...string) string {
	s.t.Helper()
	return s.write(sessionSpec{headerSpec: headerSpec{ID: id, Cwd: "/p", HasCwd: true, CreatedAt: created, Version: 4, Parent: parent},
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

// writeLog writes a whole log file.
func writeLog(t testing.TB, path string, enc Encoding, header string, batches [][]string) {
	t.Helper()
	var data []byte
	if enc == EncodingZstd {
		data, _ = zstdLog(header, batches)
	} else {
		data = []byte(rawLines(append([]string{header}, flatten(batches)...)))
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func flatten(batches [][]string) []string {
	var out []string
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

// rawLines joins lines, each ending in "\n".
func rawLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

var (
	testEncoderOnce sync.Once
	testEncoder     *zstd.Encoder
)

// zstdFrame compresses lines into one standard frame with a content
// checksum, as dsh writes an append batch.
func zstdFrame(lines []string) []byte {
	testEncoderOnce.Do(func() {
		var err error
		testEncoder, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err)
		}
	})
	return testEncoder.EncodeAll([]byte(rawLines(lines)), nil)
}

// zstdLog returns a zstd log: one frame for the header line, one per batch,
// and the offset at which each frame starts.
func zstdLog(header string, batches [][]string) ([]byte, []int) {
	data := zstdFrame([]string{header})
	offsets := []int{0}
	for _, b := range batches {
		if len(b) == 0 {
			continue
		}
		offsets = append(offsets, len(data))
		data = append(data, zstdFrame(b)...)
	}
	return data, offsets
}

// appendFile appends bytes to a file, as dsh appends to a log.
func appendFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// corruptFrame flips one byte of the frame that starts at offset start and
// ends at end: the last byte (the content checksum) when inChecksum, else a
// byte in the middle of the compressed data.
func corruptFrame(data []byte, start, end int, inChecksum bool) []byte {
	out := bytes.Clone(data)
	i := end - 1
	if !inChecksum {
		i = start + (end-start)/2
	}
	out[i] ^= 0x5A
	return out
}

// wantCode fails the test unless err carries want.
func wantCode(t *testing.T, err error, want Code) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) carries no code, want %s", err, err, want)
	}
	if e.Code != want {
		t.Fatalf("code = %s (%v), want %s", e.Code, err, want)
	}
	return e
}
