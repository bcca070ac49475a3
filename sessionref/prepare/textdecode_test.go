package prepare

import (
	"context"
	"os"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Expected values: what Node's Buffer.toString("utf8") then JSON.parse give
// (dsh's line decoding, packages/session/session-persistence-jsonl/src/
// format.ts), and, for sizes and cuts, dsh's retainReferencedSession run on
// the decoded string.

// surrogateText is written in the log with \u escapes: two lone surrogates
// and one pair.
const surrogateText = `lone \ud800 high, lone \udfff low, pair \ud83d\ude00, and <tail> text that goes on for a while`

func textDecodeStore(t *testing.T) *titles.Snapshot {
	s := logtest.NewStore(t)
	s.Simple("sur", "/w", logtest.FixtureTime,
		`{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[{"type":"text","text":"`+surrogateText+`"}]},"surfaceOp":"append"}`,
		logtest.TurnEnd(1))
	s.Simple("num", "/w", logtest.FixtureTime+1,
		`{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[{"type":"text","text":5},{"type":"text","text":{"x":1}},"junk",{"type":"text","text":"ok"}]},"surfaceOp":"append"}`,
		logtest.AssistantMsg(1, "fine"), logtest.TurnEnd(2))
	s.Simple("bytes", "/w", logtest.FixtureTime+2,
		"{\"type\":\"user/message\",\"seq\":0,\"time\":1,\"data\":{\"id\":\"u\",\"role\":\"user\",\"source\":{\"kind\":\"user\"},\"content\":[{\"type\":\"text\",\"text\":\"x\xff\xfey \xf0\x9f\x98z\"}]},\"surfaceOp\":\"append\"}",
		logtest.TurnEnd(1))
	return buildIndex(s).Snapshot()
}

func TestProjectionDecodesTextAsDsh(t *testing.T) {
	snap := textDecodeStore(t)
	tests := []struct {
		id     string
		budget int
		data   string
		stats  Stats
	}{
		// 201 bytes exactly when each lone surrogate is the 6-byte \udxxx.
		{"sur", 201, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone \ud800 high, lone \udfff low, pair 😀, and <tail> text that goes on for a while"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1}},
		// A cut keeps what TextDecoder reads back: lone surrogates become U+FFFD.
		{"sur", 200, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone � high, lone �hat goes on for a while\n[… omitted 34 UTF-8 bytes …]"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1, OmittedBytes: 34, Truncated: true}},
		{"sur", 180, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone � highn for a while\n[… omitted 54 UTF-8 bytes …]"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1, OmittedBytes: 54, Truncated: true}},
		// Blocks whose text is not a string, and entries that are not
		// blocks, are skipped; the log reads.
		{"num", 65536, `{"sessionId":"num","label":"num","cwd":"/w","capturedThroughSeq":2,"conversation":[{"role":"user","text":"ok"},{"role":"assistant","text":"fine"}]}`,
			Stats{OriginalMessages: 2, RetainedMessages: 2}},
		// One U+FFFD per maximal invalid subsequence.
		{"bytes", 65536, `{"sessionId":"bytes","label":"bytes","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"x��y �z"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1}},
	}
	for _, tt := range tests {
		got, err := SnapshotOf(context.Background(), snap, sessionref.Reference{SessionID: tt.id}, tt.budget)
		if err != nil {
			t.Errorf("%s at %d: %v", tt.id, tt.budget, err)
			continue
		}
		if string(got.Data) != tt.data || got.Stats != tt.stats {
			t.Errorf("%s at %d:\n got %s %+v\nwant %s %+v", tt.id, tt.budget, got.Data, got.Stats, tt.data, tt.stats)
		}
	}
}

func TestSpillKeepsLoneSurrogates(t *testing.T) {
	snap := textDecodeStore(t)
	spillDir := t.TempDir()
	if _, err := Prepare(context.Background(), snap, "target", []sessionref.Reference{{SessionID: "sur"}}, Limits{MaxReferenceBytes: 200, SpillDir: spillDir}); err != nil {
		t.Fatal(err)
	}
	files := spillFiles(spillDir)
	if len(files) != 1 {
		t.Fatalf("spill files %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	// dsh's renderTranscript: 64 code points per fragment, a lone
	// surrogate one of them, written by JSON.stringify as \udxxx.
	want := "\n\n### Message 1: user\n\n\"lone \\ud800 high, lone \\udfff low, pair 😀, and <tail> text that goes on fo\"\n\"r a while\"\n"
	if len(body) < len(want) || body[len(body)-len(want):] != want {
		t.Errorf("spill file ends %q, want %q", body, want)
	}
}
