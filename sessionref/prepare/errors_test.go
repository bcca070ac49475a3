package prepare

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
)

// errorStore holds three readable sessions, a, b and c, and the target t.
func errorStore(t *testing.T) (*logtest.Store, *titles.Index) {
	s := logtest.NewStore(t)
	for i, id := range []string{"a", "b", "c", "d", "t"} {
		s.Simple(id, "/p", logtest.FixtureTime+int64(i), logtest.UserMsg(0, "question "+id), logtest.AssistantMsg(1, "answer "+id), logtest.TurnEnd(2))
	}
	return s, buildIndex(s)
}

func TestErrorInvalidConfig(t *testing.T) {
	_, ix := errorStore(t)
	text := "see " + sessionref.Mention("A", "a")
	tests := []struct {
		name string
		lim  Limits
		mode Mode
	}{
		{"maxReferences above 3", Limits{MaxReferences: 4}, ModeReplace},
		{"negative maxReferences", Limits{MaxReferences: -1}, ModeReplace},
		{"negative maxReferenceBytes", Limits{MaxReferenceBytes: -5}, ModeReplace},
		{"negative contextWindow", Limits{ContextWindow: -1}, ModeReplace},
		{"fraction above 1", Limits{ReferenceContextFraction: 1.5}, ModeReplace},
		{"negative fraction", Limits{ReferenceContextFraction: -0.1}, ModeReplace},
		{"infinite fraction", Limits{ReferenceContextFraction: math.Inf(1)}, ModeReplace},
		// strconv.ParseFloat (and so a float command-line flag) accepts "NaN".
		{"NaN fraction", Limits{ContextWindow: 1000, ReferenceContextFraction: math.NaN()}, ModeReplace},
		{"unknown mode", Limits{}, Mode("rewrite")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := PrepareText(context.Background(), ix.Snapshot(), "t", text, tt.mode, nil, tt.lim)
			wantCode(t, err, sessionref.CodeInvalidConfig)
			if res != nil {
				t.Errorf("result %+v with an error", res)
			}
		})
	}
	// Also without references: a bad configuration is refused, not ignored.
	_, err := Prepare(context.Background(), ix.Snapshot(), "t", nil, Limits{MaxReferences: 9})
	wantCode(t, err, sessionref.CodeInvalidConfig)
}

func TestErrorInvalidReference(t *testing.T) {
	_, ix := errorStore(t)
	nonCanonical := sessionref.URIScheme + base64.RawURLEncoding.EncodeToString([]byte(`"\u0061"`))
	if id, err := sessionref.DecodeURI(nonCanonical); err == nil {
		t.Fatalf("test premise: %s decodes to %q", nonCanonical, id)
	}
	texts := []struct{ name, text string }{
		{"malformed mention URI", "see @[A](dsh-session:%%%)"},
		{"mention URI not a JSON string", "see @[A](" + sessionref.URIScheme + base64.RawURLEncoding.EncodeToString([]byte(`42`)) + ")"},
		{"non-canonical bare URI", "see " + nonCanonical + " now"},
		{"bad URI after a good one", sessionref.Mention("A", "a") + " and @[B](dsh-session:!)"},
	}
	for _, tt := range texts {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PrepareText(context.Background(), ix.Snapshot(), "t", tt.text, ModeReplace, nil, Limits{})
			wantCode(t, err, sessionref.CodeInvalidReference)
		})
	}
	ordinary := []string{"dsh-session: alone", "dsh-session:%%%", "no mention"}
	for _, text := range ordinary {
		res, err := PrepareText(context.Background(), ix.Snapshot(), "t", text, ModeReplace, nil, Limits{})
		if err != nil || res.AdditionalContext != nil {
			t.Errorf("%q: %v %+v; ordinary text must pass unchanged", text, err, res)
		}
	}
	explicit := []struct{ name, raw string }{
		{"not an array", `{"sessionId":"a"}`},
		{"not an object", `["a"]`},
		{"null item", `[null]`},
		{"missing sessionId", `[{"label":"A"}]`},
		{"numeric sessionId", `[{"sessionId":5}]`},
		{"numeric label", `[{"sessionId":"a","label":5}]`},
		{"object label", `[{"sessionId":"a","label":{}}]`},
	}
	for _, tt := range explicit {
		t.Run(tt.name, func(t *testing.T) {
			refs, err := ParseReferences(json.RawMessage(tt.raw))
			wantCode(t, err, sessionref.CodeInvalidReference)
			if refs != nil {
				t.Errorf("references %+v with an error", refs)
			}
		})
	}
	refs, err := ParseReferences(json.RawMessage(`[{"sessionId":"a","label":"A","extra":1},{"sessionId":"b","label":null}]`))
	if err != nil || len(refs) != 2 || refs[0] != (sessionref.Reference{SessionID: "a", Label: "A"}) || refs[1] != (sessionref.Reference{SessionID: "b"}) {
		t.Errorf("valid references: %+v %v", refs, err)
	}
	// An empty id is a string id like any other: dsh reads it, and finds
	// no such session (READ_FAILED, in TestPrepareEmptyLabelIDAndErrorOrder).
}

func TestErrorSelfReference(t *testing.T) {
	_, ix := errorStore(t)
	tests := []struct {
		name string
		refs []sessionref.Reference
	}{
		{"alone", []sessionref.Reference{{SessionID: "t"}}},
		{"repeated", []sessionref.Reference{{SessionID: "t"}, {SessionID: "t"}}},
		{"after another", []sessionref.Reference{{SessionID: "a"}, {SessionID: "t", Label: "me"}}},
		{"after too many", []sessionref.Reference{{SessionID: "a"}, {SessionID: "b"}, {SessionID: "c"}, {SessionID: "d"}, {SessionID: "t"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prep, err := Prepare(context.Background(), ix.Snapshot(), "t", tt.refs, Limits{})
			if e := wantCode(t, err, sessionref.CodeSelfReference); e.SessionID != "t" {
				t.Errorf("error names %q", e.SessionID)
			}
			if prep != nil {
				t.Errorf("preparation %+v with an error", prep)
			}
		})
	}
	_, err := PrepareText(context.Background(), ix.Snapshot(), "t", sessionref.Mention("me", "t")+" "+sessionref.Mention("me", "t"), ModeReplace, nil, Limits{})
	wantCode(t, err, sessionref.CodeSelfReference)
}

func TestErrorTooMany(t *testing.T) {
	_, ix := errorStore(t)
	refs := func(ids ...string) []sessionref.Reference {
		out := []sessionref.Reference{}
		for _, id := range ids {
			out = append(out, sessionref.Reference{SessionID: id, Label: strings.ToUpper(id)})
		}
		return out
	}
	tests := []struct {
		name    string
		refs    []sessionref.Reference
		max     int
		wantErr bool
		want    []string
	}{
		{"four distinct", refs("a", "b", "c", "d"), 0, true, nil},
		{"three distinct with duplicates", refs("a", "b", "a", "c", "b", "c", "a"), 0, false, []string{"a", "b", "c"}},
		{"three distinct under a limit of 2", refs("a", "b", "c"), 2, true, nil},
		{"two distinct under a limit of 2", refs("b", "a", "b"), 2, false, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prep, err := Prepare(context.Background(), ix.Snapshot(), "t", tt.refs, Limits{MaxReferences: tt.max})
			if tt.wantErr {
				wantCode(t, err, sessionref.CodeTooMany)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range prep.References {
				got = append(got, r.SessionID)
				if r.Label != strings.ToUpper(r.SessionID) {
					t.Errorf("label %q of %s", r.Label, r.SessionID)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || len(prep.Context.Source.References) != len(tt.want) {
				t.Errorf("references %v, want %v", got, tt.want)
			}
		})
	}
	// Duplicates keep the first label.
	prep, err := Prepare(context.Background(), ix.Snapshot(), "t", []sessionref.Reference{{SessionID: "a", Label: "First"}, {SessionID: "a", Label: "Second"}}, Limits{})
	if err != nil || len(prep.References) != 1 || prep.References[0].Label != "First" {
		t.Errorf("duplicate labels: %+v %v", prep, err)
	}
}

func TestErrorReadFailed(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, s *logtest.Store, ix *titles.Index) // after indexing
		message string
	}{
		{"unknown id", nil, "not in the sessions store"},
		{"log deleted after indexing", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			e := storetest.MustLocate(t, ix.Snapshot(), "x")
			if err := os.Remove(e.Path); err != nil {
				t.Fatal(err)
			}
		}, "x"},
		{"session directory deleted after indexing", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			e := storetest.MustLocate(t, ix.Snapshot(), "x")
			if err := os.RemoveAll(filepath.Dir(e.Path)); err != nil {
				t.Fatal(err)
			}
		}, "x"},
		{"checksum failure", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			h := logtest.Header{ID: "x", Cwd: "/p", HasCwd: true, CreatedAt: logtest.FixtureTime}
			data, offsets := logtest.ZstdLog(logtest.HeaderLine(h), [][]string{{logtest.UserMsg(0, "q")}, {logtest.AssistantMsg(1, "a"), logtest.TurnEnd(2)}})
			path := filepath.Join(s.SessionDir(h), "session.jsonl.zstd")
			if err := os.WriteFile(path, logtest.CorruptFrame(data, offsets[2], len(data), true), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "x"},
		{"unparsable line followed by turn/end", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			s.Simple("x", "/p", logtest.FixtureTime, logtest.UserMsg(0, "q"), `{"type":"assistant/message","seq":1,`, logtest.TurnEnd(2))
		}, "x"},
		{"header replaced by another session's", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			e := storetest.MustLocate(t, ix.Snapshot(), "x")
			logtest.WriteLog(t, e.Path, layout.EncodingRaw, logtest.HeaderLine(logtest.Header{ID: "y", Cwd: "/p", HasCwd: true}), [][]string{{logtest.UserMsg(0, "q")}})
		}, "x"},
		{"identity mismatch skipped at indexing", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			// "y" is written in the directory of "x"; the index never lists it as either.
			dir := filepath.Join(s.Root, layout.ProjectKey("/p"), layout.EncodeSegment("mis"))
			os.MkdirAll(dir, 0o755)
			logtest.WriteLog(t, filepath.Join(dir, "session.jsonl"), layout.EncodingRaw, logtest.HeaderLine(logtest.Header{ID: "y", Cwd: "/p", HasCwd: true}), nil)
			if err := ix.Build(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if _, ok := ix.Snapshot().Locate("y"); ok {
				t.Fatal("a session in the wrong directory is listed")
			}
		}, "y"},
		{"newer generation with a wrong header version", func(t *testing.T, s *logtest.Store, ix *titles.Index) {
			h := logtest.Header{ID: "x", Cwd: "/p", HasCwd: true, CreatedAt: logtest.FixtureTime, Version: 1}
			s.Write(logtest.Spec{Header: h, Encoding: layout.EncodingRaw, Generation: 2, Batches: [][]string{{logtest.UserMsg(0, "q")}}})
		}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := logtest.NewStore(t)
			s.Simple("x", "/p", logtest.FixtureTime, logtest.UserMsg(0, "q"), logtest.AssistantMsg(1, "a"), logtest.TurnEnd(2))
			ix := buildIndex(s)
			id := "x"
			if tt.setup != nil {
				tt.setup(t, s, ix)
			} else {
				id = "missing"
			}
			if tt.message == "y" {
				id = "y"
			}
			prep, err := Prepare(context.Background(), ix.Snapshot(), "t", []sessionref.Reference{{SessionID: id}}, Limits{})
			e := wantCode(t, err, sessionref.CodeReadFailed)
			if e.SessionID != id || !strings.Contains(e.Error(), id) {
				t.Errorf("error %q (session %q) does not name %s", e.Error(), e.SessionID, id)
			}
			if prep != nil {
				t.Errorf("preparation %+v with an error", prep)
			}
		})
	}
}

func TestErrorReadFailedNewerVersion(t *testing.T) {
	for _, version := range []int{5, 6} {
		for _, enc := range bothEncodings {
			t.Run(string(enc), func(t *testing.T) {
				s := logtest.NewStore(t)
				h := logtest.Header{ID: "new", Cwd: "/p", HasCwd: true, CreatedAt: logtest.FixtureTime, Version: version}
				s.Write(logtest.Spec{Header: h, Encoding: enc, Generation: version,
					Batches: [][]string{{logtest.UserMsg(0, "q"), logtest.TitleEvent(1, "From the future")}}})
				snap := buildIndex(s).Snapshot()
				if e := storetest.MustLocate(t, snap, "new"); e.Title != "From the future" || e.FormatVersion != version {
					t.Errorf("v%d session listed as %+v", version, e)
				}
				_, err := Prepare(context.Background(), snap, "t", []sessionref.Reference{{SessionID: "new"}}, Limits{})
				e := wantCode(t, err, sessionref.CodeReadFailed)
				if !strings.Contains(e.Error(), "newer dsh") {
					t.Errorf("message %q does not say a newer dsh wrote it", e.Error())
				}
			})
		}
	}
}

// cancellingLocator cancels the request when the last reference is located.
type cancellingLocator struct {
	Locator
	last   string
	cancel context.CancelFunc
}

func (l cancellingLocator) Locate(id string) (dshlog.Entry, bool) {
	if id == l.last {
		l.cancel()
	}
	return l.Locator.Locate(id)
}

// spillWatchContext is a request context that becomes cancelled as soon as
// a spill file exists: it cancels right after spilling, before the result
// is published.
type spillWatchContext struct {
	context.Context
	dir   string
	mu    sync.Mutex
	done  chan struct{}
	fired bool
}

func newSpillWatchContext(dir string) *spillWatchContext {
	return &spillWatchContext{Context: context.Background(), dir: dir, done: make(chan struct{})}
}

func (c *spillWatchContext) Done() <-chan struct{} { return c.done }

func (c *spillWatchContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fired && len(spillFiles(c.dir)) > 0 {
		c.fired = true
		close(c.done)
	}
	if c.fired {
		return context.Canceled
	}
	return nil
}

// spillFiles lists the regular files below dir.
func spillFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

func TestErrorCancelled(t *testing.T) {
	s := logtest.NewStore(t)
	for _, id := range []string{"a", "b", "c"} {
		s.Simple(id, "/p", logtest.FixtureTime, logtest.UserMsg(0, strings.Repeat("long question ", 40)), logtest.AssistantMsg(1, latestText), logtest.TurnEnd(2))
	}
	snap := buildIndex(s).Snapshot()
	refs := []sessionref.Reference{{SessionID: "a"}, {SessionID: "b"}, {SessionID: "c"}}
	lim := func(spill string) Limits { return Limits{MaxReferenceBytes: 400, SpillDir: spill} }

	t.Run("before the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		spill := filepath.Join(t.TempDir(), "spill")
		prep, err := Prepare(ctx, snap, "t", refs, lim(spill))
		wantCode(t, err, sessionref.CodeCancelled)
		if prep != nil || len(spillFiles(spill)) != 0 {
			t.Errorf("cancelled request published %+v, spilled %v", prep, spillFiles(spill))
		}
		_, err = PrepareText(ctx, snap, "t", sessionref.Mention("A", "a"), ModeReplace, nil, lim(spill))
		wantCode(t, err, sessionref.CodeCancelled)
	})
	t.Run("while locating", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		spill := filepath.Join(t.TempDir(), "spill")
		loc := cancellingLocator{Locator: snap, last: "c", cancel: cancel}
		prep, err := Prepare(ctx, loc, "t", refs, lim(spill))
		wantCode(t, err, sessionref.CodeCancelled)
		if prep != nil || len(spillFiles(spill)) != 0 {
			t.Errorf("cancelled request published %+v, spilled %v", prep, spillFiles(spill))
		}
	})
	t.Run("after spilling", func(t *testing.T) {
		spill := filepath.Join(t.TempDir(), "spill")
		ctx := newSpillWatchContext(spill)
		prep, err := Prepare(ctx, snap, "t", refs, lim(spill))
		if !ctx.fired {
			t.Fatalf("no spill file was ever written (err %v); the test did not cancel after spilling", err)
		}
		wantCode(t, err, sessionref.CodeCancelled)
		if prep != nil {
			t.Errorf("cancelled request published %+v", prep)
		}
		if left := spillFiles(spill); len(left) != 0 {
			t.Errorf("spill files remain after cancellation: %v", left)
		}
	})
}
