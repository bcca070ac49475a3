package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

func utf16Of(s string) []uint16 { return utf16.Encode([]rune(s)) }

// firstCompletion opens the message document and asks for session
// completion until it lists sessions: how long after start titles are
// served, whatever the recall index is doing meanwhile.
func (s *server) firstCompletion(ws string, t0 time.Time) (titleReady, answered time.Duration, err error) {
	uri := "file://" + ws + "/msg.md"
	if err := s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "@"}}); err != nil {
		return 0, 0, err
	}
	for {
		raw, err := s.Call("dsh/status", map[string]any{})
		if err != nil {
			return 0, 0, err
		}
		var st recallStatus
		if err := json.Unmarshal(raw, &st); err != nil {
			return 0, 0, fmt.Errorf("dsh/status: %w", err)
		}
		if titleReady == 0 && st.SessionsIndexed > 0 && !st.Building {
			titleReady = time.Since(t0)
		}
		raw, err = s.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 0, "character": 1}})
		if err != nil {
			return 0, 0, err
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(raw, &list) == nil && len(list.Items) > 0 {
			if titleReady == 0 {
				titleReady = time.Since(t0)
			}
			return titleReady, time.Since(t0), nil
		}
		if time.Since(t0) > 10*time.Minute {
			return 0, 0, fmt.Errorf("no session completion after %v", time.Since(t0))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// appendLatencies appends a user message holding a new word to n raw
// logs spread over entries (in the log's own format, v0 or v4) and times
// each until dsh/search finds it; an append not found within 5 s is
// counted in missed.
func (s *server) appendLatencies(entries []dshlog.Entry, n int) (out []time.Duration, missed int, err error) {
	for i := 0; len(out)+missed < n && i < len(entries); i += max(1, len(entries)/(4*n)) {
		e := entries[i]
		if e.Encoding != layout.EncodingRaw || e.Corrupt != "" || !strings.HasSuffix(e.Path, ".jsonl") {
			continue
		}
		word := fmt.Sprintf("qzfresh%dx%d", i, time.Now().UnixNano()%1e9)
		line := appendedUserMessage(e, word)
		f, err := os.OpenFile(e.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, 0, fmt.Errorf("appending to %s: %w", e.Path, err)
		}
		t0 := time.Now()
		_, err = f.WriteString(line)
		f.Close()
		if err != nil {
			return nil, 0, err
		}
		for {
			raw, err := s.Call("dsh/search", map[string]any{"query": word})
			if err != nil {
				return nil, 0, err
			}
			if strings.Contains(string(raw), e.ID) {
				out = append(out, time.Since(t0))
				break
			}
			if time.Since(t0) > 5*time.Second {
				missed++
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return out, missed, nil
}

// appendedUserMessage is a direct user message holding word, as dsh
// writes one into a log of e's format: v0's bare content, or v4's
// message with its source, role and id and the surface operation.
func appendedUserMessage(e dshlog.Entry, word string) string {
	now := time.Now()
	if e.FormatVersion >= 4 {
		return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":"the %s was appended"}],"source":{"kind":"user"},"role":"user","id":"00000000-0000-4000-8000-%012d"},"surfaceOp":"append"}`+"\n",
			e.LastSeq+1, now.UnixMilli(), word, now.UnixNano()%1e12)
	}
	return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":"the %s was appended"}]}}`+"\n",
		e.LastSeq+1, now.UnixMilli(), word)
}
