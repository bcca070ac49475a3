package recall

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestLongTokensAndPhrases: words inside tokens longer than the
// dictionary keeps (a long path, CJK text without spaces) are found
// through their trigrams and the text, and only there; a quoted phrase
// matches where its words are adjacent, not where they are apart.
func TestLongTokensAndPhrases(t *testing.T) {
	longPath := "/srv/build/" + strings.Repeat("nested/", 10) + "needle-in-path.go"
	longCJK := strings.Repeat("東京", 15) + "大阪" + strings.Repeat("京都", 15)
	st := newStore(t,
		dshgen.NewSession("s-path").CreatedAt(4000).UserText("see "+longPath+" please"),
		dshgen.NewSession("s-cjk").CreatedAt(3000).UserText(longCJK),
		dshgen.NewSession("s-adjacent").CreatedAt(2000).UserText("the quick brown fox"),
		dshgen.NewSession("s-apart").CreatedAt(1000).UserText("quick red brown dog, path"))
	if len(longPath) <= maxTokenBytes || len(longCJK) <= maxTokenBytes {
		t.Fatalf("test tokens must exceed %d bytes", maxTokenBytes)
	}
	wantIDs(t, "needle-in-path", st.search("needle-in-path"), "s-path")
	wantIDs(t, "NESTED/NEEDLE", st.search("NESTED/NEEDLE"), "s-path")
	wantIDs(t, "path", st.search("path"), "s-path", "s-apart")
	wantIDs(t, "大阪", st.search("大阪"), "s-cjk")
	wantIDs(t, "京都京都", st.search("京都京都"), "s-cjk")
	wantIDs(t, "大阪大阪 (absent)", st.search("大阪大阪"))
	wantIDs(t, "quick brown", st.search("quick brown"), "s-adjacent", "s-apart")
	wantIDs(t, `"quick brown"`, st.search(`"quick brown"`), "s-adjacent")
	wantIDs(t, `"k brown f"`, st.search(`"k brown f"`), "s-adjacent")
	wantIDs(t, `"red brown dog, pa"`, st.search(`"red brown dog, pa"`), "s-apart")
	wantIDs(t, `"quick  brown" (two spaces)`, st.search(`"quick  brown"`))
	wantIDs(t, "please path", st.search("please path"), "s-path")
	wantIDs(t, "ick", st.search("ick"), "s-adjacent", "s-apart")
}

// TestOverlayIsMergedIntoThePostings: a session read again is posted in
// the overlay under a new slot; once the slots outgrow the sessions the
// overlay is merged into the postings and the slots renumbered; every
// answer stays right throughout.
func TestOverlayIsMergedIntoThePostings(t *testing.T) {
	s := dshgen.NewSession("s-grow").CreatedAt(2000).UserText("first words")
	st := newStore(t, s, dshgen.NewSession("s-still").CreatedAt(1000).UserText("still words"))
	merged := false
	for i := 0; i < overlayMax+8; i++ {
		s.AssistantText(fmt.Sprintf("word%dx", i))
		if err := s.Append(s.Path(st.root, dshgen.Raw)); err != nil {
			t.Fatal(err)
		}
		st.sync()
		if st.rc.Stats().Unposted == 0 {
			merged = true
		}
		wantIDs(t, "new word", st.search(fmt.Sprintf("word%dx", i)), "s-grow")
		wantIDs(t, "still", st.search("still"), "s-still")
		wantIDs(t, "words", st.search("words"), "s-grow", "s-still")
	}
	if !merged {
		t.Errorf("the overlay was never merged: %+v", st.rc.Stats())
	}
	if n := st.rc.cur.Load().tok.n; n > 4 {
		t.Errorf("the postings keep %d slots for 2 sessions after the merge", n)
	}
}

// TestALargeLogKeepsNoCursor: the read state of a log larger than
// maxCursorLog (it holds the log's surface, the text included) is not
// kept, so the memory after indexing a large session falls back; an
// append to it is read in full, and still found.
func TestALargeLogKeepsNoCursor(t *testing.T) {
	s := dshgen.NewSession("s-big").UserText(strings.Repeat("large text ", maxCursorLog/10))
	st := newStore(t, s)
	if n := len(st.rc.cursors); n != 0 {
		t.Fatalf("%d cursors kept for a log over %d bytes", n, maxCursorLog)
	}
	s.AssistantText("an appended kumquat")
	if err := s.Append(s.Path(st.root, dshgen.Raw)); err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "kumquat", st.search("kumquat"), "s-big")
	if r := st.rc.Stats().Resumed; r != 0 {
		t.Errorf("the large log was resumed %d times without a kept cursor", r)
	}
}
