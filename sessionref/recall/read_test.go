package recall

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestBlocksHoldTheProjectionOfSessionsReadIntoReusedBuffers: the
// sessions a first build reads through a worker's ProjectionReader (all
// but the newest maxCursors) are stored exactly as ReadProjection
// projects them. The reader scrubs and reuses its buffers at each read,
// so a build that kept a text past its session (instead of copying it
// into the session's blocks) would store another session's words or
// zeros, and fail here.
func TestBlocksHoldTheProjectionOfSessionsReadIntoReusedBuffers(t *testing.T) {
	root := t.TempDir()
	const n = 3 * maxCursors
	for i := 0; i < n; i++ {
		s := dshgen.NewSession(fmt.Sprintf("s-%02d", i)).CreatedAt(int64(10000 - i))
		for k := 0; k < 1+i%4; k++ {
			// Texts of several sizes, some past a block (blockTarget), with
			// escapes (quotes, newlines) and words of their own session.
			words := strings.Repeat(fmt.Sprintf("w%02d%d ", i, k), 1+(i*k*700)%6000)
			s = s.UserText(fmt.Sprintf("q%d of %d: \"%s\"\n", k, i, words)).AssistantText(fmt.Sprintf("a%d\t%s", k, words))
		}
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	snap := title.Snapshot()
	rc := New(Options{Parallelism: 2})
	t.Cleanup(func() { rc.Close() })
	if err := rc.Sync(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	f := newFolder()
	for i, e := range snap.Sessions {
		want, err := dshlog.ReadProjection(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		d := rc.docs[e.ID]
		if d == nil {
			t.Fatalf("%s not indexed", e.ID)
		}
		refs, err := d.refs()
		if err != nil {
			t.Fatal(err)
		}
		var got []dshlog.ProjectedMessage
		for _, ref := range refs {
			b, err := readBlock(d.data, ref, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range b.msgs {
				got = append(got, dshlog.ProjectedMessage{Role: m.role, Seq: m.seq, Text: m.text})
			}
		}
		if len(got) != len(want.Messages) {
			t.Fatalf("%s (%d in todo): %d messages stored, the projection has %d", e.ID, i, len(got), len(want.Messages))
		}
		for k, m := range want.Messages {
			if g := got[k]; g.Role != m.Role || g.Seq != m.Seq || g.Text != m.Text {
				t.Errorf("%s (%d in todo) message %d: stored %s %d %.60q, projected %s %d %.60q", e.ID, i, k, g.Role, g.Seq, g.Text, m.Role, m.Seq, m.Text)
			}
		}
	}
}
