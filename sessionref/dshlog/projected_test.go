package dshlog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// resumeSessions are logs with every kind of line a projection meets:
// user and assistant text, compaction checkpoints replacing earlier
// messages, tool output, reasoning, system and plugin text, steering, in
// formats v0, v3 and v4, one with a garbage line that ends the readable
// prefix.
func resumeSessions() []*dshgen.Session {
	var out []*dshgen.Session
	for _, v := range []int{0, 3, 4} {
		s := dshgen.NewSession(fmt.Sprintf("resume-v%d", v)).Version(v).Cwd("/w").CreatedAt(1000).
			UserText("first question about the token bucket").AssistantText("an answer").
			ToolCall("c1", "read", `{"p":"x"}`).ToolResult("c1", "tool output never projected", false).
			AssistantReasoning("hidden reasoning", "visible text")
		if v >= 3 {
			s.SystemMessage("system text")
		}
		s.UserText("second question").AssistantText("second answer")
		s.Checkpoint("the checkpoint replacing the first four", 1, 4)
		s.UserText("after the compaction").AssistantText("東京 😀 Straße")
		if v < 4 {
			s.UserPlugin("other", "plugin text").Steering("steer here")
		}
		out = append(out, s)
	}
	out = append(out, dshgen.NewSession("resume-damaged").Cwd("/w").CreatedAt(1000).
		UserText("before the damage").RawLine(`{"type":"user/message","seq":`).UserText("after the damage"))
	return out
}

func projectionOf(t *testing.T, root, id string) (*dshlog.Projection, dshlog.Entry, error) {
	t.Helper()
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	e, ok := ix.Snapshot().Locate(id)
	if !ok {
		t.Fatalf("%s not indexed", id)
	}
	p, err := dshlog.ReadProjection(context.Background(), e)
	return p, e, err
}

func sameProjection(t *testing.T, what string, got *dshlog.Projection, gotErr error, want *dshlog.Projection, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%s: error %v, want %v", what, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// TestResumedProjectionEqualsAFullRead: for every split of each log into
// a first write (whole lines, then whole lines plus half of the next) and
// an append, reading the first part, then going on from its cursor after
// the append, gives exactly dshlog.ReadProjection of the whole log, and reads
// only the appended bytes.
func TestResumedProjectionEqualsAFullRead(t *testing.T) {
	for _, s := range resumeSessions() {
		full, root, path := writeRawLog(t, s)
		want, e, wantErr := projectionOf(t, root, s.ID())
		var cuts []int
		for i, c := range full {
			if c == '\n' && i+1 < len(full) {
				cuts = append(cuts, i+1)
				next := bytes.IndexByte(full[i+1:], '\n')
				if next > 2 {
					cuts = append(cuts, i+1+next/2) // a torn line
				}
			}
		}
		for _, cut := range cuts {
			if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			_, cur, _, err := dshlog.ReadProjectionFrom(context.Background(), e, nil)
			if err != nil {
				continue // a prefix that cannot be projected (a damaged header) has no cursor
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Write(full[cut:])
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, next, resumed, gotErr := dshlog.ReadProjectionFrom(context.Background(), e, cur)
			what := fmt.Sprintf("%s cut at byte %d of %d", s.ID(), cut, len(full))
			sameProjection(t, what, got, gotErr, want, wantErr)
			if wantErr == nil && (!resumed || next == nil) {
				t.Errorf("%s: the append was read in full (resumed %v)", what, resumed)
			}
		}
	}
}

// TestRewrittenOrMigratedLogIsReadInFull: a log rewritten in place, one
// replaced by another file, and a new generation beside it are read from
// the start, and still project as dshlog.ReadProjection does.
func TestRewrittenOrMigratedLogIsReadInFull(t *testing.T) {
	s := resumeSessions()[0]
	root := t.TempDir()
	path, err := s.Save(root, dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	_, e, _ := projectionOf(t, root, s.ID())
	_, cur, _, err := dshlog.ReadProjectionFrom(context.Background(), e, nil)
	if err != nil || cur == nil {
		t.Fatalf("first read: %v %v", cur, err)
	}
	// In place: the same length with other words at the end of what was
	// read (the resume check compares the bytes just before the old end,
	// as the title index does; dsh only appends), then a longer log.
	body, _ := os.ReadFile(path)
	changed := append([]byte(nil), body...)
	digit := bytes.LastIndexAny(changed, "0123456789")
	if digit < len(changed)-32 {
		t.Fatalf("no digit in the last 32 bytes of %q", changed[len(changed)-32:])
	}
	changed[digit] = '0' + (changed[digit]-'0'+1)%10
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(append(changed, changed[bytes.IndexByte(changed, '\n')+1:]...), 0)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, _, wantErr := projectionOf(t, root, s.ID())
	got, cur2, resumed, gotErr := dshlog.ReadProjectionFrom(context.Background(), e, cur)
	sameProjection(t, "rewritten in place", got, gotErr, want, wantErr)
	if resumed || cur2 == nil {
		t.Fatalf("a log rewritten in place: resumed %v, next cursor %v", resumed, cur2)
	}
	// Replaced by another file (a new inode), longer than before.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, append(body, body[bytes.IndexByte(body, '\n')+1:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	want, _, wantErr = projectionOf(t, root, s.ID())
	got, cur3, resumed, gotErr := dshlog.ReadProjectionFrom(context.Background(), e, cur2)
	sameProjection(t, "replaced", got, gotErr, want, wantErr)
	if resumed || cur3 == nil {
		t.Fatalf("a replaced log: resumed %v, next cursor %v", resumed, cur3)
	}
	// A v4 generation appears beside the log: it is read instead.
	v4 := dshgen.NewSession(s.ID()).Version(4).Generation(4).Cwd("/w").CreatedAt(1000).UserText("migrated text")
	if _, err := v4.Save(root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	want, e4, wantErr := projectionOf(t, root, s.ID())
	got, _, resumed, gotErr = dshlog.ReadProjectionFrom(context.Background(), e4, cur3)
	sameProjection(t, "migrated", got, gotErr, want, wantErr)
	if resumed || wantErr != nil || want.FormatVersion != 4 {
		t.Errorf("migration: resumed %v, format %d, %v", resumed, want.FormatVersion, wantErr)
	}
}

// TestZstdLogsAreReadInFull: a zstd log has no cursor, and projects as
// dshlog.ReadProjection does.
func TestZstdLogsAreReadInFull(t *testing.T) {
	s := resumeSessions()[2]
	root := t.TempDir()
	if _, err := s.Save(root, dshgen.Zstd); err != nil {
		t.Fatal(err)
	}
	want, e, wantErr := projectionOf(t, root, s.ID())
	got, cur, resumed, err := dshlog.ReadProjectionFrom(context.Background(), e, nil)
	sameProjection(t, "zstd", got, err, want, wantErr)
	if cur != nil || resumed {
		t.Errorf("zstd log: cursor %v, resumed %v", cur, resumed)
	}
}

// writeRawLog writes s's raw log into a new root and returns its bytes
// and path, for a test that rewrites it cut.
func writeRawLog(t *testing.T, s *dshgen.Session) (full []byte, root, path string) {
	t.Helper()
	full, err := s.Bytes(dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	path = s.Path(root, dshgen.Raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, full, 0o600); err != nil {
		t.Fatal(err)
	}
	return full, root, path
}
