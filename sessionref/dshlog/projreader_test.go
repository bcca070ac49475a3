package dshlog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// copyProjection is p with its own Messages slice (the texts are copied
// with strings.Clone), to compare after the reader's next read.
func copyProjection(p *dshlog.Projection) *dshlog.Projection {
	if p == nil {
		return nil
	}
	c := *p
	c.Messages = nil
	for _, m := range p.Messages {
		m.Text = strings.Clone(m.Text)
		c.Messages = append(c.Messages, m)
	}
	return &c
}

// sameReadsOverStore reads every session the title index lists under root
// with one ProjectionReader, newest first, and requires each result to be
// ReadProjectionFrom's (error included), compared before the next read.
// It returns how many sessions it read.
func sameReadsOverStore(t *testing.T, root string) int {
	t.Helper()
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var r dshlog.ProjectionReader
	snap := ix.Snapshot()
	for _, e := range snap.Sessions {
		want, _, _, wantErr := dshlog.ReadProjectionFrom(context.Background(), e, nil)
		got, resumed, gotErr := r.ReadFrom(context.Background(), e, nil)
		if resumed {
			t.Errorf("%s: resumed without a cursor", e.ID)
		}
		// copyProjection: an empty Messages is nil in both.
		sameProjection(t, e.ID, copyProjection(got), gotErr, copyProjection(want), wantErr)
	}
	return len(snap.Sessions)
}

// TestProjectionReaderReadsWhatReadProjectionFromReads: on dshgen's bench
// stores (v0 and v4, raw and zstd), every adversarial case and the logs
// dsh recorded, one reader used for every session gives exactly the
// projection ReadProjectionFrom gives, though its buffers hold the texts
// of the session before.
func TestProjectionReaderReadsWhatReadProjectionFromReads(t *testing.T) {
	overSmallBenchStores(t, 5, "read", sameReadsOverStore)
	t.Run("adversarial", func(t *testing.T) {
		root := t.TempDir()
		storetest.WriteAllCases(t, root)
		if n := sameReadsOverStore(t, root); n == 0 {
			t.Error("the title index lists no adversarial session")
		}
	})
	t.Run("recorded", func(t *testing.T) {
		for _, dir := range []string{testfixtures.Dir(t), testfixtures.DirV4(t)} {
			for _, store := range []string{"raw", "zstd"} {
				root := filepath.Join(dir, store, "sessions")
				if n := sameReadsOverStore(t, root); n == 0 {
					t.Errorf("no sessions under %s", root)
				}
			}
		}
	})
}

// TestProjectionReaderGoesOnFromACursor: a cursor of ReadProjectionFrom
// given to a reader after an append is read on from (resumed) and gives
// the projection of the whole log, for every whole-line split of each
// log; the reader's buffers hold another log's texts before each read.
func TestProjectionReaderGoesOnFromACursor(t *testing.T) {
	var r dshlog.ProjectionReader
	fillerRoot := t.TempDir()
	filler := dshgen.NewSession("filler").Cwd("/w").CreatedAt(1000).
		UserText(strings.Repeat("filler text ", 500)).AssistantText(strings.Repeat("more filler ", 500))
	if _, err := filler.Save(fillerRoot, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	_, fe, err := projectionOf(t, fillerRoot, filler.ID())
	if err != nil {
		t.Fatal(err)
	}
	sessions := resumeSessions()
	for k, s := range sessions {
		full, root, path := writeRawLog(t, s)
		want, e, wantErr := projectionOf(t, root, s.ID())
		for i, c := range full {
			if c != '\n' || i+1 == len(full) {
				continue
			}
			cut := i + 1
			if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			_, cur, _, err := dshlog.ReadProjectionFrom(context.Background(), e, nil)
			if err != nil {
				continue
			}
			if err := os.WriteFile(path, full, 0o600); err != nil { // the same file, grown
				t.Fatal(err)
			}
			if _, _, err := r.ReadFrom(context.Background(), fe, nil); err != nil {
				t.Fatal(err) // fills the reader's buffers first
			}
			got, resumed, gotErr := r.ReadFrom(context.Background(), e, cur)
			what := fmt.Sprintf("%s cut at byte %d of %d", s.ID(), cut, len(full))
			sameProjection(t, what, copyProjection(got), gotErr, copyProjection(want), wantErr)
			if wantErr == nil && !resumed {
				t.Errorf("%s: read in full", what)
			}
		}
		if k == len(sessions)-1 && bytes.Count(full, []byte("\n")) < 3 {
			t.Fatal("the damaged log has too few lines to split")
		}
	}
}

// TestProjectionReaderScrubsTheTextsOfItsLastRead: the texts a read
// returned are overwritten when the reader reads again, so a consumer
// that kept one instead of copying it (the recall index's build must
// not) sees its text change, and its tests fail.
func TestProjectionReaderScrubsTheTextsOfItsLastRead(t *testing.T) {
	root := t.TempDir()
	a := dshgen.NewSession("scrub-a").Cwd("/w").CreatedAt(1000).
		UserText("the first question, long enough to be seen").AssistantText("its answer, escaped \"here\"\nand two lines")
	b := dshgen.NewSession("scrub-b").Cwd("/w").CreatedAt(2000).UserText("b")
	for _, s := range []*dshgen.Session{a, b} {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ea, _ := ix.Snapshot().Locate(a.ID())
	eb, _ := ix.Snapshot().Locate(b.ID())
	var r dshlog.ProjectionReader
	pa, _, err := r.ReadFrom(context.Background(), ea, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := copyProjection(pa)
	texts := make([]string, len(pa.Messages))
	for i, m := range pa.Messages {
		texts[i] = m.Text // kept, not copied
	}
	want, _, _, err := dshlog.ReadProjectionFrom(context.Background(), ea, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameProjection(t, "a", kept, nil, want, nil)
	if _, _, err := r.ReadFrom(context.Background(), eb, nil); err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if s == want.Messages[i].Text {
			t.Errorf("message %d of a kept its text %q after the next read", i, s)
		}
	}
}
