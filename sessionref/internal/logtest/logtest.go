// Package logtest writes dsh session logs by hand, line by line, for the
// tests of sessionref/dshlog and of the packages above it: headers and events in
// the shapes SPEC §1 gives, raw or as zstd frames, into t.TempDir() stores
// laid out as SPEC §1.1 says.
package logtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/klauspost/compress/zstd"
)

// FixtureTime is the createdAt of the first session a test writes; later
// sessions count up from it so that newest-first order is predictable.
const FixtureTime int64 = 1783352113760

// The event types these helpers write (SPEC §1.4).
const (
	typeUserMessage      = "user/message"
	typeAssistantMessage = "assistant/message"
	typeTurnEnd          = "turn/end"
	typeTitle            = "session/title"
)

// Header describes line 1 of a log.
type Header struct {
	ID        string
	Cwd       string
	HasCwd    bool
	Version   int
	CreatedAt int64
	// Parent, when set, is the parentSession of a subagent child.
	Parent string
}

// HeaderLine writes the header line of §1.3.
func HeaderLine(h Header) string {
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

// JSONText marshals v for embedding in a hand-written event line.
func JSONText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// EventLine writes an event the way dsh does: type first, then seq.
// surfaceOp is raw JSON ("" leaves it out).
func EventLine(typ string, seq int64, data any, surfaceOp string) string {
	s := fmt.Sprintf(`{"type":%s,"seq":%d,"time":%d,"data":%s`, JSONText(typ), seq, FixtureTime+seq, JSONText(data))
	if surfaceOp != "" {
		s += `,"surfaceOp":` + surfaceOp
	}
	return s + "}"
}

// OpAppend is the append surface op.
const OpAppend = `"append"`

// TextBlocks is message content of one text block per text.
func TextBlocks(texts ...string) []map[string]any {
	out := make([]map[string]any, 0, len(texts))
	for _, t := range texts {
		out = append(out, map[string]any{"type": "text", "text": t})
	}
	return out
}

// UserMsg is a direct human prompt.
func UserMsg(seq int64, text string) string {
	return UserMsgFrom(seq, map[string]any{"kind": "user"}, TextBlocks(text))
}

// UserMsgFrom is a user message with the given source and content blocks.
func UserMsgFrom(seq int64, source map[string]any, content any) string {
	return EventLine(typeUserMessage, seq, map[string]any{
		"content": content, "source": source, "role": "user", "id": fmt.Sprintf("msg-%d", seq),
	}, OpAppend)
}

// CheckpointMsg is a compaction checkpoint (§1.4).
func CheckpointMsg(seq int64, text string) string {
	return UserMsgFrom(seq, map[string]any{"kind": "plugin", "plugin": "compact", "compactionId": "c1"}, TextBlocks(text))
}

// AssistantMsg is a v0 assistant message with the message wrapper.
func AssistantMsg(seq int64, text string) string {
	return AssistantMsgBlocks(seq, TextBlocks(text))
}

// AssistantMsgBlocks is AssistantMsg with the given content.
func AssistantMsgBlocks(seq int64, content any) string {
	return EventLine(typeAssistantMessage, seq, map[string]any{
		"turn": 1, "step": 1,
		"message": map[string]any{"id": fmt.Sprintf("a-%d", seq), "role": "assistant", "content": content,
			"source": map[string]any{"kind": "model"}},
	}, OpAppend)
}

// TitleEvent is a session/title event.
func TitleEvent(seq int64, title string) string {
	return EventLine(typeTitle, seq, map[string]any{"title": title, "messageSeqs": []int{0}, "source": map[string]any{"kind": "provider"}}, "")
}

// TurnEnd is the turn/end event of turn 1.
func TurnEnd(seq int64) string {
	return EventLine(typeTurnEnd, seq, map[string]any{"turn": 1}, "")
}

// Spec is one session to write into a test store.
type Spec struct {
	Header
	// Encoding is layout.EncodingRaw or layout.EncodingZstd.
	Encoding layout.Encoding
	// Generation 0 writes session.jsonl[.zstd], N writes session.vN.jsonl[.zstd].
	Generation int
	// Batches are the event lines after the header; for zstd each batch
	// is one frame.
	Batches [][]string
}

// Store is a sessions root under t.TempDir().
type Store struct {
	T    testing.TB
	Root string
}

// NewStore makes an empty sessions root.
func NewStore(t testing.TB) *Store {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Store{T: t, Root: root}
}

// SessionDir returns where dsh keeps the session of h.
func (s *Store) SessionDir(h Header) string {
	return filepath.Join(s.Root, layout.ProjectDir(h.Cwd, h.HasCwd), layout.EncodeSegment(h.ID))
}

// LogName is the file name of a generation in an encoding.
func LogName(gen int, enc layout.Encoding) string {
	name := "session"
	if gen > 0 {
		name += fmt.Sprintf(".v%d", gen)
	}
	name += ".jsonl"
	if enc == layout.EncodingZstd {
		name += ".zstd"
	}
	return name
}

// Write writes a session and returns its log path.
func (s *Store) Write(spec Spec) string {
	s.T.Helper()
	dir := s.SessionDir(spec.Header)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.T.Fatal(err)
	}
	path := filepath.Join(dir, LogName(spec.Generation, spec.Encoding))
	WriteLog(s.T, path, spec.Encoding, HeaderLine(spec.Header), spec.Batches)
	return path
}

// Simple writes a raw v0 session with the given events in one batch.
func (s *Store) Simple(id, cwd string, created int64, events ...string) string {
	s.T.Helper()
	return s.Write(Spec{
		Header:   Header{ID: id, Cwd: cwd, HasCwd: cwd != "", CreatedAt: created},
		Encoding: layout.EncodingRaw, Batches: [][]string{events},
	})
}

// WriteLog writes a whole log file.
func WriteLog(t testing.TB, path string, enc layout.Encoding, header string, batches [][]string) {
	t.Helper()
	var data []byte
	if enc == layout.EncodingZstd {
		data, _ = ZstdLog(header, batches)
	} else {
		data = []byte(RawLines(append([]string{header}, Flatten(batches)...)))
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Flatten joins batches of lines into one list.
func Flatten(batches [][]string) []string {
	var out []string
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

// RawLines joins lines, each ending in "\n".
func RawLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

var (
	encoderOnce sync.Once
	encoder     *zstd.Encoder
)

// ZstdFrame compresses lines into one standard frame with a content
// checksum, as dsh writes an append batch.
func ZstdFrame(lines []string) []byte {
	return AppendFrame(nil, []byte(RawLines(lines)))
}

// AppendFrame appends data to dst compressed as one such frame, whether
// or not data ends a line.
func AppendFrame(dst, data []byte) []byte {
	encoderOnce.Do(func() {
		var err error
		encoder, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err)
		}
	})
	return encoder.EncodeAll(data, dst)
}

// ZstdLog returns a zstd log: one frame for the header line, one per batch,
// and the offset at which each frame starts.
func ZstdLog(header string, batches [][]string) ([]byte, []int) {
	data := ZstdFrame([]string{header})
	offsets := []int{0}
	for _, b := range batches {
		if len(b) == 0 {
			continue
		}
		offsets = append(offsets, len(data))
		data = append(data, ZstdFrame(b)...)
	}
	return data, offsets
}

// AppendFile appends bytes to a file, as dsh appends to a log.
func AppendFile(t testing.TB, path string, data []byte) {
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

// CorruptFrame flips one byte of the frame that starts at offset start and
// ends at end: the last byte (the content checksum) when inChecksum, else a
// byte in the middle of the compressed data.
func CorruptFrame(data []byte, start, end int, inChecksum bool) []byte {
	out := bytes.Clone(data)
	i := end - 1
	if !inChecksum {
		i = start + (end-start)/2
	}
	out[i] ^= 0x5A
	return out
}
