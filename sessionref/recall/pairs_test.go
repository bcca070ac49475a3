package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/words"
)

// planOver is planPairs of phrase with the pieces' tokens looked up in
// dict as a search's plan looks them up (containing, anywhere in a
// token).
func planOver(dict []string, phrase string) (pairPlan, bool) { return planOverAt(dict, phrase, false) }

// planOverAt is planOver with wordStart, as completion's plans look the
// tokens up.
func planOverAt(dict []string, phrase string, wordStart bool) (pairPlan, bool) {
	var ids [][]uint32
	d := &dictionary{tokens: dict}
	for _, piece := range strings.FieldsFunc(phrase, unicode.IsSpace) {
		ids = append(ids, d.containing(dict, piece, wordStart))
	}
	return planPairs(dict, ids, phrase)
}

// filterOf builds the pair filter of one block of messages as a build
// does (worker.addText, message by message, in pieces of foldPiece bytes)
// and returns it with the dictionary of the block's tokens.
func filterOf(t *testing.T, msgs []string) (filter []byte, dict []string) {
	t.Helper()
	w := newWorker(nil, nil, nil, context.Background(), 0)
	w.ts.reset()
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	w.ts.startBlock(n)
	for _, m := range msgs {
		w.ts.startMessage()
		w.addText(m)
	}
	return w.ts.appendFilter(nil), w.ts.tokens()
}

// phrasesIn returns every run of two to four tokens of the folded text
// one space apart, cut to a suffix of its first token and a prefix of its
// last, as a search may be typed.
func phrasesIn(r *rand.Rand, folded string) []string {
	var out []string
	for _, line := range strings.FieldsFunc(folded, func(c rune) bool { return unicode.IsSpace(c) && c != ' ' }) {
		words := strings.Split(line, " ")
		for i := range words {
			for n := 2; n <= 4 && i+n <= len(words); n++ {
				ws := append([]string(nil), words[i:i+n]...)
				ok := true
				for _, w := range ws {
					ok = ok && w != "" && strings.IndexFunc(w, unicode.IsSpace) < 0
				}
				if !ok {
					continue
				}
				first, last := []rune(ws[0]), []rune(ws[n-1])
				ws[0] = string(first[r.IntN(len(first)):])
				ws[n-1] = string(last[:1+r.IntN(len(last))])
				out = append(out, strings.Join(ws, " "))
			}
		}
	}
	return out
}

// A block's pair filter never rules out a phrase the block holds: every
// run of words one space apart, its first word cut to a suffix and its
// last to a prefix, passes the filter of the block it was cut from,
// whatever the text: ASCII and not, short and long tokens, tokens of
// eight bytes and of nine, NUL, tabs, runs of spaces, messages that end
// in a space, and messages longer than foldPiece, folded in pieces.
func TestPairFilterHoldsEveryPhraseOfItsBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	vocab := []string{"a", "of", "the", "poll", "session", "Session,", "goroutine", "debounce.", "Straße", "ΟΔΟΣ",
		"x\x00y", "12345678", "123456789", "登录失败", "e\u0301t\u00e9", strings.Repeat("long", 20), "/srv/build/" + strings.Repeat("p", 60)}
	seps := []string{" ", " ", " ", " ", "  ", "\t", "\n", " \u00a0", "\u3000"}
	text := func(words int) string {
		var b strings.Builder
		for i := range words {
			if i > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		if r.IntN(4) == 0 {
			b.WriteString(" ")
		}
		return b.String()
	}
	checked := 0
	for round := range 200 {
		var msgs []string
		for range 1 + r.IntN(4) {
			msgs = append(msgs, text(1+r.IntN(60)))
		}
		if round%50 == 0 {
			// Longer than foldPiece: folded and tokenised in pieces.
			msgs = append(msgs, text(foldPiece/5))
		}
		filter, dict := filterOf(t, msgs)
		f := newFolder()
		for _, m := range msgs {
			folded := f.fold(m)
			for _, phrase := range phrasesIn(r, folded) {
				// Where the phrase starts a word, also with the pieces'
				// tokens a completion's plan takes (at a word start); in
				// the short messages (a search of the long ones for each
				// of their phrases would take minutes).
				if len(folded) < 4096 && words.Index(folded, phrase, 0) >= 0 {
					if plan, ok := planOverAt(dict, phrase, true); ok && plan.excludes(filter) {
						t.Fatalf("the filter of a block rules out %q at a word start, which it holds (message %.80q…)", phrase, m)
					}
				}
				plan, ok := planOver(dict, phrase)
				if !ok {
					continue
				}
				checked++
				if plan.excludes(filter) {
					t.Fatalf("the filter of a block rules out %q, which it holds (message %.80q…)", phrase, m)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d phrases had a pair plan", checked)
	}
}

// A pair filter rules out most phrases its block does not hold: of 2,000
// pairs of words never adjacent in a block of text with a pair every 7.5
// bytes (dshgen's: 7.7), at most a fifth pass (filterBitsPer32 gives such
// text 4 bits per pair: about 15%, a little more on 64-bit words).
func TestPairFilterRulesOutMostAbsentPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	var vocab []string
	for range 400 {
		w := make([]byte, 5+r.IntN(4))
		for k := range w {
			w[k] = byte('a' + r.IntN(26))
		}
		vocab = append(vocab, string(w))
	}
	var b strings.Builder
	adjacent := map[string]bool{}
	prev := ""
	for b.Len() < blockTarget {
		w := vocab[r.IntN(len(vocab))]
		if prev != "" {
			b.WriteByte(' ')
			adjacent[prev+" "+w] = true
		}
		b.WriteString(w)
		prev = w
	}
	filter, dict := filterOf(t, []string{b.String()})
	passed, tried := 0, 0
	for tried < 2000 {
		phrase := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		if adjacent[phrase] {
			continue
		}
		plan, ok := planOver(dict, phrase)
		if !ok {
			t.Fatalf("no pair plan for %q", phrase)
		}
		tried++
		if !plan.excludes(filter) {
			passed++
		}
	}
	if passed > tried/5 {
		t.Errorf("%d of %d absent pairs passed the filter, want at most a fifth", passed, tried)
	}
	t.Logf("%d of %d absent pairs passed the filter (%.1f%%)", passed, tried, 100*float64(passed)/float64(tried))
}

// A phrase decides nothing at a space beside a piece of one or two bytes
// (such tokens are in no pair), or beside a piece too many tokens start or
// end with, nor when its pieces are not one space apart; it decides at
// its other spaces.
func TestPairPlanDecidesOnlyWhatTheFilterHolds(t *testing.T) {
	dict := []string{"of", "the", "poll", "polls", "session", "subsession"}
	for _, c := range []struct {
		phrase string
		spaces int
	}{
		{"session poll", 1},
		{"session of poll", 0},
		{"session of the poll", 1},
		{"session  poll", 0},
		{"session\tpoll", 0},
		{" session poll", 0},
		{"session poll ", 0},
		{"ion pol", 1},
		{"ion po", 0},
		{"on pol", 0},
	} {
		plan, ok := planOver(dict, c.phrase)
		if len(plan.spaces) != c.spaces || ok != (c.spaces > 0) {
			t.Errorf("planPairs of %q decides at %d spaces (ok %v), want %d", c.phrase, len(plan.spaces), ok, c.spaces)
		}
	}
	// A piece of four bytes or more is its own edge; a shorter first or
	// last piece has the edges of the tokens it ends or begins.
	var many []string
	for i := range maxPairProbes + 1 {
		many = append(many, "pol"+string(rune('!'+i)), "x"+string(rune('!'+i))+"ion")
	}
	dict = append(many, "session")
	if _, ok := planOver(dict, "session pol"); ok {
		t.Errorf("a phrase whose last piece begins tokens of %d heads decides at its space", len(many)/2)
	}
	if _, ok := planOver(dict, "ion poll"); ok {
		t.Errorf("a phrase whose first piece ends tokens of %d tails decides at its space", len(many)/2)
	}
	if plan, ok := planOver(dict, "xsession pollution"); !ok || len(plan.spaces) != 1 || len(plan.spaces[0]) != 1 {
		t.Errorf("a phrase of long pieces looks up %v at its spaces, want one pair", plan.spaces)
	}
}

// A block holding a token longer than maxTokenBytes has no filter: its
// pairs with such a token cannot be named by a search.
func TestBlockWithALongTokenHasNoFilter(t *testing.T) {
	if f, _ := filterOf(t, []string{"see " + strings.Repeat("x", maxTokenBytes+1) + " poll"}); len(f) != 0 {
		t.Errorf("a block with a long token has a filter of %d bytes", len(f))
	}
	if f, _ := filterOf(t, []string{"session poll"}); len(f) == 0 {
		t.Error("a block of short tokens has no filter")
	}
}

// Through a search: a phrase of common words that only the last block of
// a session holds decodes that block and not the others, which hold both
// words but not one after the other; the other sessions, which never
// hold the phrase, are not decoded at all.
func TestPhraseSearchDecodesOnlyTheBlocksThatMayHoldIt(t *testing.T) {
	st := newStore(t, lateFiltersSessions(3)...)
	st.rc.cache = newBlockCache(DefaultCacheBytes) // nothing warm from the build
	before := st.rc.Stats()
	res := st.search(`"session poll"`)
	wantIDs(t, `"session poll"`, res, "s-late")
	after := st.rc.Stats()
	decoded, filtered := after.BlocksDecoded-before.BlocksDecoded, after.BlocksFiltered-before.BlocksFiltered
	if decoded != 1 || filtered != 4+3*3 {
		t.Errorf("the search decoded %d blocks and filtered %d, want 1 and %d", decoded, filtered, 4+3*3)
	}
}

// lateFiltersSessions are s-late, whose last block of five alone holds
// "session poll", and others s-other-i of three blocks that hold both
// words in every block but never the phrase.
func lateFiltersSessions(others int) []*dshgen.Session {
	filler := strings.Repeat("poll the session and session the poll ", blockTarget/38+1)
	late := dshgen.NewSession("s-late").CreatedAt(3000)
	for i := range 4 {
		late.UserText(fmt.Sprintf("%d %s", i, filler))
	}
	late.UserText("at last a session poll")
	sessions := []*dshgen.Session{late}
	for i := range others {
		s := dshgen.NewSession(fmt.Sprintf("s-other-%d", i)).CreatedAt(int64(2000 - i))
		for k := range 3 {
			s.UserText(fmt.Sprintf("%d %s", k, filler))
		}
		sessions = append(sessions, s)
	}
	return sessions
}

// A block read for a search is cached only when it holds a hit, as a
// copy of its own: a second search decodes again only the block without
// one, and answers the same excerpts, roles and seqs from the copies.
func TestOnlyBlocksWithAHitAreCached(t *testing.T) {
	filler := strings.Repeat("plain words of filler text ", blockTarget/27+1)
	s := dshgen.NewSession("s-one").CreatedAt(1000).UserText("0 " + filler)
	for i := 1; i <= 3; i++ {
		s.AssistantText(fmt.Sprintf("kiwi %d %s", i, filler))
	}
	st := newStore(t, s)
	st.rc.cache = newBlockCache(DefaultCacheBytes) // nothing warm from the build
	decoded := func() int64 { return st.rc.Stats().BlocksDecoded }
	d0 := decoded()
	first := st.search("kiwi")
	d1 := decoded()
	second := st.search("kiwi")
	d2 := decoded()
	if d1-d0 != 4 || d2-d1 != 1 {
		t.Errorf("the searches decoded %d and %d blocks, want 4 (all) and 1 (the one without a hit)", d1-d0, d2-d1)
	}
	if n := st.rc.Stats().BlocksFiltered; n != 0 {
		t.Errorf("a word, which has no pair plan, had %d blocks filtered", n)
	}
	if fmt.Sprint(first) != fmt.Sprint(second) || len(first) != 1 || len(first[0].Matches) != 3 {
		t.Fatalf("the second search answered %+v, the first %+v", second, first)
	}
	for i, m := range second[0].Matches {
		if m.Role != "assistant" || !strings.HasPrefix(m.Excerpt, fmt.Sprintf("kiwi %d ", i+1)) {
			t.Errorf("match %d from the cached copy: %s %q", i, m.Role, m.Excerpt[:12])
		}
	}
}

// A copy of a block read into scratch space owns its memory: the scratch
// space read again leaves it as it was.
func TestBlockCloneOwnsItsMemory(t *testing.T) {
	msgs := []rawMessage{{role: "user", seq: 1, text: "First Message"}, {role: "tool-ish", seq: 2, text: "second"}, {role: "", seq: 3, text: ""}}
	rec, _ := appendRecord(nil, encodeBlock(nil, msgs), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	var sc blockScratch
	f := newFolder()
	b, err := sc.decode(rec, blockRef{}, f)
	if err != nil {
		t.Fatal(err)
	}
	c := b.clone()
	other, _ := appendRecord(nil, encodeBlock(nil, []rawMessage{{role: "xxxx", seq: 9, text: "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}}), nil)
	if _, err := sc.decode(other, blockRef{}, f); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if got := c.msgs[i]; got.role != m.role || got.text != m.text || got.seq != m.seq {
			t.Errorf("message %d of the copy: %q %d %q, want %q %d %q", i, got.role, got.seq, got.text, m.role, m.seq, m.text)
		}
	}
	if c.folded != "first message\x00second\x00\x00" || string(c.filter) != "\x01\x02\x03\x04\x05\x06\x07\x08" {
		t.Errorf("the copy's folding %q, filter %x", c.folded, c.filter)
	}
}

// A search leaves its scratch space to the next one, and what it answered
// does not change when the next search decodes other blocks into the same
// space (234 KB were allocated per search of `"session poll"` at 10,000
// sessions, before). A block with a hit that the cache will not keep is
// not copied for it either.
func TestSearchesShareScratchSpace(t *testing.T) {
	filler := strings.Repeat("poll the session and session the poll ", blockTarget/38+1)
	var sessions []*dshgen.Session
	for i := range 4 {
		s := dshgen.NewSession(fmt.Sprintf("s-%d", i)).CreatedAt(int64(1000 + i))
		s.UserText("0 " + filler)
		// The hits lie in a block of a whole block's size.
		s.UserText(fmt.Sprintf("%s a session poll in %d, then kiwi melon %d", filler, i, i))
		sessions = append(sessions, s)
	}
	st := newStore(t, sessions...)
	st.rc.cache = newBlockCache(1) // keeps no block: every search decodes into its scratch space
	first := st.search(`"session poll"`)
	want := fmt.Sprint(first)
	if len(first) != 4 {
		t.Fatalf(`"session poll" found %d sessions, want 4: %+v`, len(first), first)
	}
	if other := st.search(`"kiwi melon"`); len(other) != 4 {
		t.Fatalf(`"kiwi melon" found %d sessions, want 4`, len(other))
	}
	if got := fmt.Sprint(first); got != want {
		t.Fatalf("the first search's answer changed after the next search:\n got %s\nwant %s", got, want)
	}
	// The space a search grew is there for the next one, even after the
	// collections that empty a sync.Pool (a search after the process
	// idled).
	st.search(`"session poll"`)
	runtime.GC()
	runtime.GC()
	sc := st.rc.takeScratch()
	if cap(sc.raw) < blockTarget {
		t.Errorf("after two collections, the next search's scratch space holds %d bytes of block, want the %d the last one grew", cap(sc.raw), blockTarget)
	}
	st.rc.keepScratch(sc)
	decoded := st.rc.Stats().BlocksDecoded
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const searches = 20
	for range searches {
		st.search(`"session poll"`)
	}
	runtime.ReadMemStats(&m1)
	perSearch := int64(m1.TotalAlloc-m0.TotalAlloc) / searches
	blocks := (st.rc.Stats().BlocksDecoded - decoded) / searches
	if blocks == 0 || perSearch > blocks*blockTarget {
		t.Errorf("a search decoded %d blocks of about %d bytes and allocated %d bytes, want less than the blocks take", blocks, blockTarget, perSearch)
	}
}

// The foldings of runes a search leaves to the next are bounded: text in
// many scripts does not grow them without end.
func TestScratchSpaceKeepsBoundedFoldings(t *testing.T) {
	ix := New(Options{})
	for _, n := range []int{maxKeptFoldings, maxKeptFoldings + 1} {
		sc := ix.takeScratch()
		clear(sc.f.cache)
		for r := rune(0x4e00); len(sc.f.cache) < n; r++ {
			sc.f.rune(r)
		}
		ix.keepScratch(sc)
		got := len(ix.takeScratch().f.cache)
		if n > maxKeptFoldings && got != 0 || n == maxKeptFoldings && got != n {
			t.Errorf("a scratch space left with %d foldings came back with %d", n, got)
		}
	}
}
