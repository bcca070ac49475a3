package recall

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

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

// TestPhrasesPairingALongToken: a quoted phrase whose words pair a word
// with a piece of a token longer than maxTokenBytes (which only the
// trigrams of long tokens hold) is found where it is said, before and
// after the long token, and in the overlay as in the postings; a phrase
// whose words are apart is not. (The dictionary found no token for the
// long piece, and the trigrams of the whole phrase, the space included,
// are in no long token: such phrases were never found.)
func TestPhrasesPairingALongToken(t *testing.T) {
	longPath := "/srv/build/" + strings.Repeat("nested/", 10) + "needle-in-path.go"
	st := newStore(t,
		dshgen.NewSession("s-path").CreatedAt(3000).UserText("open "+longPath+" please"),
		dshgen.NewSession("s-apart").CreatedAt(2000).UserText("open the file "+longPath+", please"),
		dshgen.NewSession("s-other").CreatedAt(1000).UserText("open needle please"))
	if len(longPath) <= maxTokenBytes {
		t.Fatalf("test token must exceed %d bytes", maxTokenBytes)
	}
	check := func(when string) {
		wantIDs(t, when+`: "open /srv/build"`, st.search(`"open /srv/build"`), "s-path")
		wantIDs(t, when+`: "path.go please"`, st.search(`"path.go please"`), "s-path")
		wantIDs(t, when+`: "open /srv/build/nested/"`, st.search(`"open /srv/build/nested/"`), "s-path")
		wantIDs(t, when+`: "file /srv"`, st.search(`"file /srv"`), "s-apart")
		wantIDs(t, when+`: "open needle"`, st.search(`"open needle"`), "s-other")
		wantIDs(t, when+`: "open path.go" (apart)`, st.search(`"open path.go"`))
	}
	check("posted")
	wantIDs(t, `" /srv/build" (one piece, a space)`, st.search(`" /srv/build"`), "s-path", "s-apart")
	s := dshgen.NewSession("s-late").CreatedAt(4000).UserText("then see " + longPath)
	if _, err := s.Save(st.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	st.sync()
	if st.rc.Stats().Unposted == 0 {
		t.Fatalf("the new session is not in the overlay: %+v", st.rc.Stats())
	}
	wantIDs(t, `overlay: "then see /srv/build"`, st.search(`"then see /srv/build"`), "s-late")
	check("beside the overlay")
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

// TestTokenSetSplitsAsFields: the token set holds exactly the distinct
// white-space-separated fields of its text (strings.FieldsFunc with
// unicode.IsSpace) up to maxTokenBytes, and flags longer ones: across
// eight-byte boundaries, control bytes that are not white space, white
// space that is not ASCII (U+00A0, U+3000, U+2028), bytes that are not
// UTF-8, and enough tokens to grow its table several times.
func TestTokenSetSplitsAsFields(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "w%d ", i%3000)
	}
	texts := []string{
		"a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh iiiiiiiii jjjjjjjjjjjjjjjjj",
		"tab\tsep\nnew\vline\fform\rret  double",
		"ctl\x00byte\x01and\x1fmore\x7fdel!bang",
		"nbsp\u00a0ideo\u3000line\u2028para\u2029end",
		"bad\xffutf8\xc3 and\xe2\x82 cut",
		"東京 大阪\u3000京都 emoji🙂face " + strings.Repeat("x", maxTokenBytes) + " " + strings.Repeat("y", maxTokenBytes+1),
		b.String(),
	}
	for _, text := range texts {
		ts, gs := newTokenSet(), newGramSet()
		ts.add([]byte(text), gs)
		want, long := spaceSeparatedTokens(text)
		got, twice := listedTokens(ts)
		for _, tok := range twice {
			t.Errorf("%.40q: token %q listed twice", text, tok)
		}
		if !maps.Equal(got, want) || ts.long != long {
			t.Errorf("%.40q: tokens %d (long %v), want %d (long %v)", text, len(got), ts.long, len(want), long)
			for w := range want {
				if !got[w] {
					t.Errorf("  missing %q", w)
				}
			}
			for g := range got {
				if !want[g] {
					t.Errorf("  extra %q", g)
				}
			}
		}
		ts.reset()
		if len(ts.tokens()) != 0 || ts.long {
			t.Errorf("reset left %d tokens", len(ts.tokens()))
		}
	}
}

// TestASCIITokensMatchFields: on random ASCII text (every byte value
// below 0x80, runs of white space and tokens across the 64-byte words of
// addASCII's bitmap, tokens longer than maxTokenBytes) and on the same
// text with one byte that is not ASCII at a random place (add starts
// again rune by rune), the tokens are those of strings.FieldsFunc, each
// listed once, also when both texts went into one set.
func TestASCIITokensMatchFields(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	alphabet := []byte(" \t\n\v\f\rab\x00\x01\x08\x0e\x1f\x7f!~AZaz09")
	for i := range 1000 {
		n := r.IntN(300)
		b := make([]byte, n)
		for k := range b {
			switch r.IntN(4) {
			case 0:
				b[k] = byte(r.IntN(0x80))
			default:
				b[k] = alphabet[r.IntN(len(alphabet))]
			}
		}
		if i%7 == 0 && n > 0 { // a long token somewhere
			at := r.IntN(n)
			b = append(b[:at], append([]byte(strings.Repeat("q", maxTokenBytes+r.IntN(3))), b[at:]...)...)
		}
		texts := []string{string(b)}
		if n > 0 {
			at := r.IntN(n)
			texts = append(texts, string(b[:at])+"é"+string(b[at:]))
		}
		// Each text alone, then both in one set (as two messages of a
		// session: the ASCII one and the other hold the same tokens, which
		// must be listed once).
		for _, msgs := range append([][]string{texts}, texts[:1], texts[1:]) {
			ts, gs := newTokenSet(), newGramSet()
			for _, text := range msgs {
				ts.add([]byte(text), gs)
			}
			want, long := spaceSeparatedTokens(msgs...)
			got, twice := listedTokens(ts)
			if len(twice) > 0 {
				t.Fatalf("%q: token %q listed twice", msgs, twice[0])
			}
			if !maps.Equal(got, want) || ts.long != long {
				t.Fatalf("%q: tokens %v (long %v), want %v (long %v)", msgs, got, ts.long, want, long)
			}
		}
	}
	for x := range 256 { // spaceBits against the table, byte by byte
		if x >= 0x80 {
			break
		}
		for k := range 8 {
			word := uint64(0x61) * 0x0101010101010101 // "aaaaaaaa"
			word = word&^(0xff<<(8*k)) | uint64(x)<<(8*k)
			want := uint64(0)
			if byteClass[x] == classSpace {
				want = 1 << k
			}
			if got, _ := spaceBits(word); got != want {
				t.Errorf("spaceBits with %#x as byte %d = %08b, want %08b", x, k, got, want)
			}
		}
	}
}

// A session of many distinct tokens grows both tables of its token set
// (the short one before each run of 64 bytes, the other as it fills),
// keeps them at most half full and loses none of its tokens, in ASCII
// text and in text that is not.
func TestTokenSetGrowsAndKeepsEveryToken(t *testing.T) {
	// First 700 distinct short tokens in one message that ends in a long
	// token, so that every short one is added by shortTokens, which must
	// find the table grown before it.
	var b strings.Builder
	for i := range 700 {
		b.WriteString(string([]byte{'a' + byte(i/26/26%26), 'a' + byte(i/26%26), 'a' + byte(i%26), ' '}))
	}
	b.WriteString(strings.Repeat("z", 20) + " ")
	msgs := []string{b.String()}
	r := rand.New(rand.NewPCG(31, 31))
	for range 40 {
		var b strings.Builder
		for range 200 {
			for range 1 + r.IntN(20) { // short and long tokens alike
				b.WriteByte(byte('a' + r.IntN(26)))
			}
			b.WriteByte(" \n"[r.IntN(2)])
		}
		msgs = append(msgs, b.String())
	}
	msgs = append(msgs, msgs[3]+"é") // a message that is not ASCII
	ts, gs := newTokenSet(), newGramSet()
	short0, slots0 := len(ts.short), len(ts.slots)
	for i, m := range msgs {
		ts.startMessage()
		ts.add([]byte(m), gs)
		if 2*ts.shortUsed > len(ts.short) || 2*ts.used > len(ts.slots) {
			t.Fatalf("after message %d: tables more than half full: %d of %d, %d of %d", i, ts.shortUsed, len(ts.short), ts.used, len(ts.slots))
		}
	}
	want, _ := spaceSeparatedTokens(msgs...)
	got, twice := listedTokens(ts)
	if len(twice) > 0 {
		t.Fatalf("token %q listed twice", twice[0])
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%d tokens listed, want %d", len(got), len(want))
	}
	if len(ts.short) <= short0 || len(ts.slots) <= slots0 {
		t.Fatalf("tables of %d and %d slots: the test grew neither past %d and %d", len(ts.short), len(ts.slots), short0, slots0)
	}
}

// containing finds in the joined tokens what a scan of every token finds,
// for pieces inside tokens, across them, at word starts or not, as the
// dictionary grows between lookups (each view joins what it holds).
func TestContainingFindsWhatAScanOfEveryTokenFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 41))
	alphabet := []rune("abcab-_./:0123éΣσ登录")
	token := func() string {
		n := 1 + r.IntN(12)
		b := make([]rune, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 200 {
		d := newDictionary()
		var views [][]string
		for range 1 + r.IntN(4) { // the dictionary grows; each view is a prefix
			for range r.IntN(300) {
				d.mu.Lock()
				d.idLocked([]byte(token()))
				d.mu.Unlock()
			}
			views = append(views, d.list())
		}
		for _, dict := range views {
			for range 30 {
				piece := token()
				if len(dict) > 0 && r.IntN(2) == 0 { // a piece of a token
					tok := []rune(dict[r.IntN(len(dict))])
					i := r.IntN(len(tok))
					piece = string(tok[i : i+1+r.IntN(len(tok)-i)])
				}
				for _, wordStart := range []bool{false, true} {
					got, want := d.containing(dict, piece, wordStart), containingScan(dict, piece, wordStart)
					if !slices.Equal(got, want) {
						t.Fatalf("round %d: %q (word start %v) in %d tokens: %v, a scan finds %v", round, piece, wordStart, len(dict), got, want)
					}
				}
			}
		}
	}
}

// spaceSeparatedTokens is what the tokeniser must list for texts: every
// run between white space of at most maxTokenBytes, and whether a longer
// one is among them.
func spaceSeparatedTokens(texts ...string) (want map[string]bool, long bool) {
	want = map[string]bool{}
	for _, text := range texts {
		for _, f := range strings.FieldsFunc(text, unicode.IsSpace) {
			if len(f) > maxTokenBytes {
				long = true
			} else {
				want[f] = true
			}
		}
	}
	return want, long
}

// listedTokens is the set ts lists, and the tokens it lists more than once.
func listedTokens(ts *tokenSet) (got map[string]bool, twice []string) {
	got = map[string]bool{}
	for _, tok := range ts.tokens() {
		if got[tok] {
			twice = append(twice, tok)
		}
		got[tok] = true
	}
	return got, twice
}
