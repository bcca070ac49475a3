package dshgen

// An independent reader used only by the tests: it parses written bytes with
// encoding/json and folds the surface from the parsed events, so the
// builder's Expected is checked against what is really on disk. It is
// validated against the recorded fixtures and their expected.json.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
)

// fixturesOrSkip returns the fixtures directory or skips the test.
func fixturesOrSkip(t *testing.T) string {
	t.Helper()
	return testfixtures.Dir(t)
}

// readLogText returns the decompressed text of a log file.
func readLogText(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if !strings.HasSuffix(path, ".zstd") {
		return data
	}
	dec, err := zstd.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("zstd reader: %v", err)
	}
	defer dec.Close()
	text, err := io.ReadAll(dec)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return text
}

// parsedLog is a log read back: the header and the events with packed rows
// expanded into placeholder chunk events.
type parsedLog struct {
	header map[string]any
	lines  []map[string]any
	events []map[string]any
}

// parseLog parses text line by line, failing on any malformed line.
func parseLog(t *testing.T, name string, text []byte) parsedLog {
	t.Helper()
	if len(text) == 0 || text[len(text)-1] != '\n' {
		t.Fatalf("%s: log does not end in a newline", name)
	}
	var p parsedLog
	for i, line := range bytes.Split(text[:len(text)-1], []byte("\n")) {
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(whatwgUTF8(line)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s line %d is not a JSON object: %v\n%s", name, i+1, err, line)
		}
		if i == 0 {
			p.header = v
			continue
		}
		p.lines = append(p.lines, v)
		switch v["type"] {
		case "text-chunks", "reasoning-chunks", "tool-call-chunks":
			data := v["data"].(map[string]any)
			members := data["texts"]
			if members == nil {
				members = data["args"]
			}
			seq0 := num(t, v["seq0"])
			time0 := num(t, v["time0"])
			dt := data["dt"].([]any)
			for k := range members.([]any) {
				at := time0
				for _, d := range dt[:k] {
					at += num(t, d)
				}
				p.events = append(p.events, map[string]any{"type": "assistant/chunk", "seq": json.Number(fmt.Sprint(seq0 + int64(k))), "time": json.Number(fmt.Sprint(at))})
			}
		default:
			p.events = append(p.events, v)
		}
	}
	return p
}

// num reads a json.Number as int64.
func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("want a number, got %T %v", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("want an integer, got %v", n)
	}
	return i
}

// readFacts are the facts the test reader derives.
type readFacts struct {
	title        *string
	displayTitle string
	lastSeq      int64
	conversation []Message
	compacted    bool
}

// str is v as a string, "" otherwise.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// textOf joins the text blocks of content with "\n".
func textOf(content any) string {
	blocks, _ := content.([]any)
	var texts []string
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if str(m["type"]) == "text" {
			texts = append(texts, str(m["text"]))
		}
	}
	return strings.Join(texts, "\n")
}

// foldAndProject computes the facts of a parsed log (SPEC §1.5, §1.6, §2.3.3).
func foldAndProject(t *testing.T, p parsedLog) readFacts {
	t.Helper()
	type item struct {
		seq int64
		ev  map[string]any
	}
	var surface []item
	var f readFacts
	f.lastSeq = -1
	descriptor := ""
	pos := func(seq int64) int {
		for i, it := range surface {
			if it.seq == seq {
				return i
			}
		}
		return -1
	}
	for _, ev := range p.events {
		seq := num(t, ev["seq"])
		f.lastSeq = seq
		data, _ := ev["data"].(map[string]any)
		switch str(ev["type"]) {
		case "session/title":
			title := str(data["title"])
			f.title = &title
		case "subagent/descriptor":
			if v, ok := data["version"].(json.Number); ok && v.String() == "2" {
				descriptor = str(data["label"])
			}
		case "steering/message":
			surface = append(surface, item{seq, ev})
		}
		switch op := ev["surfaceOp"].(type) {
		case string:
			surface = append(surface, item{seq, ev})
		case map[string]any:
			start, end := op["start"], op["end"]
			if start == nil {
				start, end = op["startSeq"], op["endSeq"]
			}
			i, j := pos(num(t, start)), pos(num(t, end))
			if i < 0 || j < i {
				t.Fatalf("replace at seq %d names %v..%v, not in the surface", seq, start, end)
			}
			surface = append(surface[:i], append([]item{{seq, ev}}, surface[j+1:]...)...)
		}
	}
	f.conversation = []Message{}
	for _, it := range surface {
		data, _ := it.ev["data"].(map[string]any)
		var m Message
		checkpoint := false
		switch str(it.ev["type"]) {
		case "user/message":
			src, _ := data["source"].(map[string]any)
			kind := str(src["kind"])
			checkpoint = kind == "plugin" && str(src["plugin"]) == "compact" || kind == "compact-checkpoint"
			if kind != "user" && !checkpoint {
				continue
			}
			m = Message{Role: "user", Text: textOf(data["content"])}
		case "steering/message":
			content, src := data["content"], data["source"]
			if msg, ok := data["message"].(map[string]any); ok {
				content, src = msg["content"], msg["source"]
			}
			if s, _ := src.(map[string]any); str(s["kind"]) != "user" {
				continue
			}
			m = Message{Role: "user", Text: textOf(content)}
		case "assistant/message":
			content := data["content"]
			if msg, ok := data["message"].(map[string]any); ok {
				content = msg["content"]
			}
			m = Message{Role: "assistant", Text: textOf(content)}
		default:
			continue
		}
		if m.Text == "" {
			continue
		}
		f.compacted = f.compacted || checkpoint
		f.conversation = append(f.conversation, m)
	}
	f.displayTitle = str(p.header["id"])
	if f.title != nil {
		f.displayTitle = *f.title
	}
	if descriptor != "" {
		f.displayTitle = descriptor
	}
	return f
}

// checkAgainstExpected compares the test reader's facts of the file at
// path with the builder's Expected.
func checkAgainstExpected(t *testing.T, path string, want Expected) {
	t.Helper()
	p := parseLog(t, path, readLogText(t, path))
	got := foldAndProject(t, p)
	if str(p.header["id"]) != want.ID {
		t.Errorf("%s: header id %q, want %q", path, p.header["id"], want.ID)
	}
	if got.lastSeq != want.LastSeq {
		t.Errorf("%s: last seq %d, want %d", path, got.lastSeq, want.LastSeq)
	}
	if (got.title != nil) != want.HasTitle || got.title != nil && *got.title != want.Title {
		t.Errorf("%s: title %v, want %q (has %v)", path, got.title, want.Title, want.HasTitle)
	}
	if got.displayTitle != want.DisplayTitle {
		t.Errorf("%s: display title %q, want %q", path, got.displayTitle, want.DisplayTitle)
	}
	if got.compacted != want.Compacted {
		t.Errorf("%s: compacted %v, want %v", path, got.compacted, want.Compacted)
	}
	if !equalConversation(got.conversation, want.Conversation) {
		t.Errorf("%s: conversation\n got %q\nwant %q", path, got.conversation, want.Conversation)
	}
}

// equalConversation compares two conversations.
func equalConversation(a, b []Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReaderMatchesFixtureExpectations validates the test reader itself
// against the recorded logs and their expected.json.
func TestReaderMatchesFixtureExpectations(t *testing.T) {
	root := fixturesOrSkip(t)
	raw, err := os.ReadFile(filepath.Join(root, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name               string  `json:"name"`
		RelativeDir        string  `json:"relativeDir"`
		Title              *string `json:"title"`
		DisplayTitle       string  `json:"displayTitle"`
		CapturedThroughSeq *int64  `json:"capturedThroughSeq"`
		Snapshot           struct {
			Data struct {
				Conversation []Message `json:"conversation"`
			} `json:"data"`
			Stats struct {
				Compacted bool `json:"compacted"`
			} `json:"stats"`
		} `json:"snapshot65536"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("expected.json lists no sessions")
	}
	for _, c := range cases {
		for _, store := range []string{"raw/sessions", "zstd/sessions"} {
			name := LogFileName(0, Raw)
			if strings.HasPrefix(store, "zstd") {
				name = LogFileName(0, Zstd)
			}
			path := filepath.Join(root, store, c.RelativeDir, name)
			t.Run(c.Name+"/"+store, func(t *testing.T) {
				got := foldAndProject(t, parseLog(t, path, readLogText(t, path)))
				wantSeq := int64(-1)
				if c.CapturedThroughSeq != nil {
					wantSeq = *c.CapturedThroughSeq
				}
				if got.lastSeq != wantSeq {
					t.Errorf("last seq %d, want %d", got.lastSeq, wantSeq)
				}
				if (got.title == nil) != (c.Title == nil) || got.title != nil && *got.title != *c.Title {
					t.Errorf("title %v, want %v", got.title, c.Title)
				}
				if got.displayTitle != c.DisplayTitle {
					t.Errorf("display title %q, want %q", got.displayTitle, c.DisplayTitle)
				}
				if got.compacted != c.Snapshot.Stats.Compacted {
					t.Errorf("compacted %v, want %v", got.compacted, c.Snapshot.Stats.Compacted)
				}
				want := c.Snapshot.Data.Conversation
				if want == nil {
					want = []Message{}
				}
				if !equalConversation(got.conversation, want) {
					t.Errorf("conversation\n got %q\nwant %q", got.conversation, want)
				}
			})
		}
	}
}

// whatwgUTF8 decodes b as dsh does before JSON.parse (Buffer.toString,
// the WHATWG decoder): each maximal invalid subsequence, the longest run
// that still begins some well-formed sequence, becomes one U+FFFD. Found by
// trying completions, so it shares no code with the reader under test.
func whatwgUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		n := 1
		for k := 2; k <= 3 && i+k <= len(b); k++ {
			if !beginsSequence(b[i : i+k]) {
				break
			}
			n = k
		}
		out = append(out, "\uFFFD"...)
		i += n
	}
	return out
}

// beginsSequence reports whether some continuation bytes complete p into
// exactly one well-formed code point.
func beginsSequence(p []byte) bool {
	conts := []byte{0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF}
	var try func(q []byte) bool
	try = func(q []byte) bool {
		if utf8.Valid(q) && utf8.RuneCount(q) == 1 {
			return true
		}
		if len(q) >= 4 {
			return false
		}
		for _, c := range conts {
			if try(append(append([]byte{}, q...), c)) {
				return true
			}
		}
		return false
	}
	return try(p)
}
