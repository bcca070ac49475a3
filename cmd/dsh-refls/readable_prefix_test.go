package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// The expected values here are those of dsh 0.1.1's own reader
// (packages/session/session-persistence-jsonl/src/format.ts,
// SessionLogScanner.consumeEventLine, and index.ts, readZstdPrefix): the
// readable prefix of a raw log ends at the first unparsable line or seq
// gap or duplicate; inside a complete zstd frame such a line is corruption;
// a torn last frame contributes the complete lines it still decodes to.

const prefixHeader = `{"type":"session","version":0,"id":"src","cwd":"/w","createdAt":1700000000000,"delegationDepth":0}`

func prefixUser(seq int, text string) string {
	return `{"type":"user/message","seq":` + strconv.Itoa(seq) + `,"time":1,"data":{"id":"u` + strconv.Itoa(seq) + `","role":"user","source":{"kind":"user"},"content":[{"type":"text","text":"` + text + `"}]},"surfaceOp":"append"}`
}

func prefixAssistant(seq int, text string) string {
	return `{"type":"assistant/message","seq":` + strconv.Itoa(seq) + `,"time":2,"data":{"turn":1,"step":1,"message":{"id":"a` + strconv.Itoa(seq) + `","role":"assistant","source":{"kind":"model"},"content":[{"type":"text","text":"` + text + `"}]}},"surfaceOp":"append"}`
}

func prefixTurnEnd(seq int) string {
	return `{"type":"turn/end","seq":` + strconv.Itoa(seq) + `,"time":3,"data":{"turn":1}}`
}

// writePrefixStore writes session "src" in cwd /w as the given log file
// and returns the sessions root.
func writePrefixStore(t *testing.T, name string, data []byte) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(root, layout.ProjectDir("/w", true), layout.EncodeSegment("src"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// zstdFrames encodes each batch of lines as one checksummed zstd frame.
func zstdFrames(t *testing.T, batches ...[]string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out []byte
	for _, b := range batches {
		out = enc.EncodeAll([]byte(strings.Join(b, "\n")+"\n"), out)
	}
	return out
}

// conversationOf prepares src through the binary and returns the texts of
// its snapshot in order, or fails.
func conversationOf(t *testing.T, root string) string {
	t.Helper()
	// A budget above every log here, so retention keeps each message whole.
	p := prepareCLI(t, "--sessions-root", root, "--spill-dir", t.TempDir(), "--max-reference-bytes", "4000000",
		"--text", sessionref.EncodeURI("src"))
	if len(p.AdditionalContext.Content) != 1 {
		t.Fatalf("no context message: %+v", p)
	}
	text := p.AdditionalContext.Content[0].Text
	start := strings.Index(text, `"conversation":`)
	end := strings.Index(text, "\n</referenced-sessions>")
	if start < 0 || end < start {
		t.Fatalf("prompt without a conversation:\n%s", text)
	}
	return text[start:end]
}

func TestCLIReadablePrefixOfRawLogs(t *testing.T) {
	const bad = `{"type":"user/message","seq":2,"data":{`
	for _, tt := range []struct {
		name  string
		lines []string
		want  string // the snapshot's conversation, as dsh gives it
	}{
		{"garbage mid, no end", []string{prefixUser(0, "a"), bad, prefixAssistant(2, "b")},
			`"conversation":[{"role":"user","text":"a"}]}]`},
		{"seq gap, no end", []string{prefixUser(0, "a"), prefixAssistant(2, "b"), prefixUser(3, "c")},
			`"conversation":[{"role":"user","text":"a"}]}]`},
		{"seq duplicate", []string{prefixUser(0, "a"), prefixAssistant(0, "b")},
			`"conversation":[{"role":"user","text":"a"}]}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := writePrefixStore(t, "session.jsonl", []byte(prefixHeader+"\n"+strings.Join(tt.lines, "\n")+"\n"))
			if got := conversationOf(t, root); got != tt.want {
				t.Errorf("conversation %s\nwant         %s", got, tt.want)
			}
		})
	}
	t.Run("damage followed by turn/end", func(t *testing.T) {
		root := writePrefixStore(t, "session.jsonl", []byte(prefixHeader+"\n"+
			strings.Join([]string{prefixUser(0, "a"), prefixAssistant(2, "b"), prefixTurnEnd(3)}, "\n")+"\n"))
		if code, msg := prepareError(t, "--sessions-root", root, "--text", sessionref.EncodeURI("src")); code != sessionref.CodeReadFailed {
			t.Errorf("%s %q, want READ_FAILED", code, msg)
		}
	})
}

func TestCLIReadablePrefixOfZstdLogs(t *testing.T) {
	t.Run("seq gap inside a complete frame", func(t *testing.T) {
		data := zstdFrames(t, []string{prefixHeader}, []string{prefixUser(0, "a"), prefixAssistant(2, "b")})
		root := writePrefixStore(t, "session.jsonl.zstd", data)
		if code, msg := prepareError(t, "--sessions-root", root, "--text", sessionref.EncodeURI("src")); code != sessionref.CodeReadFailed {
			t.Errorf("%s %q, want READ_FAILED", code, msg)
		}
	})
	t.Run("torn last frame keeps its decodable lines", func(t *testing.T) {
		// Incompressible filler makes the last frame span several blocks,
		// so cutting its end leaves whole lines in the blocks before.
		filler := make([]byte, 300<<10)
		x := uint32(1)
		for i := range filler {
			x = x*1664525 + 1013904223
			filler[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[x>>24%36]
		}
		data := zstdFrames(t, []string{prefixHeader}, []string{prefixUser(0, "a"), prefixTurnEnd(1)})
		last := zstdFrames(t, []string{prefixUser(2, "kept"), prefixUser(3, string(filler)), prefixUser(4, string(filler))})
		root := writePrefixStore(t, "session.jsonl.zstd", append(data, last[:len(last)-1000]...))
		got := conversationOf(t, root)
		if !strings.HasPrefix(got, `"conversation":[{"role":"user","text":"a"},{"role":"user","text":"kept"}`) {
			t.Errorf("conversation does not hold the torn frame's first complete line: %.200s", got)
		}
		if strings.Count(got, `"role":`) == 4 {
			t.Errorf("the cut line was read: %.200s", got)
		}
	})
}
