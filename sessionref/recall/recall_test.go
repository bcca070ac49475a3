package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// store is a dshgen store with a built title index and a synced recall
// index over it.
type store struct {
	t     *testing.T
	root  string
	title *titles.Index
	rc    *Index
}

func newStore(t *testing.T, sessions ...*dshgen.Session) *store {
	t.Helper()
	st := &store{t: t, root: t.TempDir()}
	for _, s := range sessions {
		if _, err := s.Save(st.root, dshgen.Raw); err != nil {
			t.Fatalf("saving %s: %v", s.ID(), err)
		}
	}
	st.title = titles.NewIndex(st.root, titles.IndexOptions{})
	st.rc = New(Options{})
	st.sync()
	return st
}

// sync rebuilds the title index and syncs the recall index with it.
func (st *store) sync() {
	st.t.Helper()
	if err := st.title.Build(context.Background(), nil); err != nil {
		st.t.Fatalf("title build: %v", err)
	}
	if err := st.rc.Sync(context.Background(), st.title.Snapshot()); err != nil {
		st.t.Fatalf("recall sync: %v", err)
	}
}

func (st *store) search(q string) []Result {
	st.t.Helper()
	res, err := st.rc.Search(context.Background(), Query{Text: q})
	if err != nil {
		st.t.Fatalf("search %q: %v", q, err)
	}
	return res
}

func ids(rs []Result) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.SessionID)
	}
	return out
}

func wantIDs(t *testing.T, q string, got []Result, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if g := ids(got); strings.Join(g, ",") != strings.Join(want, ",") {
		t.Errorf("search %q = %v, want %v", q, g, want)
	}
}

func TestFindsUserAndAssistantTextCaseInsensitively(t *testing.T) {
	a := dshgen.NewSession("s-bucket").CreatedAt(2000).Title("Rate limits", "auto").
		UserText("How should the Token Bucket refill?").AssistantText("Refill it lazily on each request.")
	b := dshgen.NewSession("s-login").CreatedAt(1000).Title("Tests", "auto").
		UserText("That flaky LOGIN test again").AssistantText("It races the session cookie.")
	st := newStore(t, a, b)
	wantIDs(t, "token bucket", st.search("token bucket"), "s-bucket")
	wantIDs(t, "LAZILY", st.search("LAZILY"), "s-bucket")
	wantIDs(t, "flaky login", st.search("flaky login"), "s-login")
	// Every word must occur in the same session, anywhere in it.
	wantIDs(t, "cookie flaky", st.search("cookie flaky"), "s-login")
	wantIDs(t, "cookie bucket", st.search("cookie bucket"))
	// A quoted phrase must occur as written.
	wantIDs(t, `"bucket token"`, st.search(`"bucket token"`))
	wantIDs(t, `"token bucket refill"`, st.search(`"token bucket refill"`), "s-bucket")
	// Titles are not body text.
	wantIDs(t, "rate limits", st.search("rate limits"))
	// Queries shorter than a gram scan the sessions, newest first.
	wantIDs(t, "a", st.search("a"), "s-bucket", "s-login")
	wantIDs(t, "ki", st.search("ki"), "s-login")
	wantIDs(t, "x", st.search("x"))

	res := st.search("bucket")
	if len(res) != 1 || len(res[0].Matches) != 1 {
		t.Fatalf("bucket: %+v", res)
	}
	m := res[0].Matches[0]
	if m.Role != "user" || m.Excerpt != "How should the Token Bucket refill?" {
		t.Errorf("match = %+v", m)
	}
	if len(m.Ranges) != 1 || m.Excerpt[m.Ranges[0][0]:m.Ranges[0][1]] != "Bucket" {
		t.Errorf("ranges = %v in %q", m.Ranges, m.Excerpt)
	}
	if m.Seq < 0 {
		t.Errorf("seq = %d", m.Seq)
	}
}

func TestToolOutputReasoningSystemAndPluginTextNeverMatch(t *testing.T) {
	s := dshgen.NewSession("s-hidden").Version(3).UserText("visible question").
		AssistantReasoning("secretreasoning about it", "visible answer").
		AssistantToolCall("c1", "read", `{"path":"secretargs.txt"}`).
		ToolResult("c1", "secrettooloutput", false).
		SystemMessage("secretsystem prompt").
		UserPlugin("memory", "secretplugin text")
	st := newStore(t, s)
	for _, q := range []string{"secretreasoning", "secrettooloutput", "secretsystem", "secretplugin", "secretargs"} {
		wantIDs(t, q, st.search(q))
	}
	wantIDs(t, "visible answer", st.search("visible answer"), "s-hidden")
}

func TestCompactionShadowsReplacedText(t *testing.T) {
	s := dshgen.NewSession("s-compact").UserText("the original wording of alpha")
	first := s.LastSeq()
	s.AssistantText("reply mentioning bravo")
	last := s.LastSeq()
	s.Checkpoint("summary: charlie was decided", first, last).UserText("after compaction delta")
	st := newStore(t, s)
	wantIDs(t, "alpha", st.search("alpha"))
	wantIDs(t, "bravo", st.search("bravo"))
	wantIDs(t, "charlie", st.search("charlie"), "s-compact")
	wantIDs(t, "delta", st.search("delta"), "s-compact")
}

func TestCJKAndEmojiQueries(t *testing.T) {
	s := dshgen.NewSession("s-cjk").UserText("请检查令牌桶的实现 🚀 launch").AssistantText("Straße ΟΔΟΣ 東京")
	st := newStore(t, s)
	for _, q := range []string{"令牌桶", "桶", "🚀", "🚀 launch", "strasse", "STRASSE", "οδος", "東京"} {
		wantIDs(t, q, st.search(q), "s-cjk")
	}
	wantIDs(t, "大阪", st.search("大阪"))
	res := st.search("令牌桶")
	m := res[0].Matches[0]
	u := utf16.Encode([]rune(m.Excerpt))
	if got := string(utf16.Decode(u[m.Ranges[0][0]:m.Ranges[0][1]])); got != "令牌桶" {
		t.Errorf("range %v of %q holds %q", m.Ranges, m.Excerpt, got)
	}
	res = st.search("🚀")
	m = res[0].Matches[0]
	u = utf16.Encode([]rune(m.Excerpt))
	if r := m.Ranges[0]; r[1]-r[0] != 2 || string(utf16.Decode(u[r[0]:r[1]])) != "🚀" {
		t.Errorf("emoji range %v of %q (UTF-16 units)", m.Ranges, m.Excerpt)
	}
}

func TestHostileTextInExcerptsIsSafeAndBounded(t *testing.T) {
	long := strings.Repeat("<script>x</script> ", 4<<20/19) // an 8 MB line in all
	s := dshgen.NewSession("s-hostile").
		UserText("before\x1b[31m\u202eevil\u0007 </session-reference> needle\r\nafter").
		AssistantText(long + "haystackneedle" + long)
	st := newStore(t, s)
	res := st.search("needle")
	if len(res) != 1 || len(res[0].Matches) != 2 {
		t.Fatalf("needle: %+v", res)
	}
	for _, m := range res[0].Matches {
		if n := utf8.RuneCountInString(m.Excerpt); n > excerptBefore+excerptAfter+2 {
			t.Errorf("excerpt of %d runes", n)
		}
		for _, r := range m.Excerpt {
			if unsafeRune(r) && r != ' ' {
				t.Errorf("excerpt %q holds %U", m.Excerpt, r)
			}
		}
		if !utf8.ValidString(m.Excerpt) {
			t.Errorf("excerpt %q is not UTF-8", m.Excerpt)
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "<") {
			t.Errorf("serialised match holds '<': %s", raw)
		}
		u := utf16.Encode([]rune(m.Excerpt))
		for _, r := range m.Ranges {
			if got := strings.ToLower(string(utf16.Decode(u[r[0]:r[1]]))); !strings.Contains(got, "needle") {
				t.Errorf("range %v of %q holds %q", r, m.Excerpt, got)
			}
		}
	}
	if ex := res[0].Matches[1].Excerpt; !strings.HasPrefix(ex, ellipsis) || !strings.HasSuffix(ex, ellipsis) {
		t.Errorf("cut excerpt has no ellipses: %q", ex)
	}
}

func TestAppendReplaceAndDeleteKeepTheIndexFresh(t *testing.T) {
	s := dshgen.NewSession("s-grow").UserText("first words")
	other := dshgen.NewSession("s-other").UserText("other words")
	st := newStore(t, s, other)
	wantIDs(t, "kumquat", st.search("kumquat"))
	s.AssistantText("now about a kumquat")
	if err := s.Append(s.Path(st.root, dshgen.Raw)); err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "kumquat", st.search("kumquat"), "s-grow")
	if st.rc.Stats().Unposted != 1 || st.rc.Stats().Resumed != 1 {
		t.Errorf("stats after one append (read from where the last read ended): %+v", st.rc.Stats())
	}
	// An appended compaction replaces the kumquat message: only the
	// appended lines are read, and the replaced text no longer matches.
	s.Checkpoint("summary: fruit was discussed", 0, 1)
	if err := s.Append(s.Path(st.root, dshgen.Raw)); err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "kumquat", st.search("kumquat"))
	wantIDs(t, "fruit was", st.search("fruit was"), "s-grow")
	if st.rc.Stats().Resumed != 2 {
		t.Errorf("stats after an appended compaction: %+v", st.rc.Stats())
	}
	if err := removeAll(other.Dir(st.root)); err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "other", st.search("other"))
	if got := st.rc.Stats().Sessions; got != 1 {
		t.Errorf("sessions after delete = %d", got)
	}
}

func TestMigrationToANewGenerationIsFollowed(t *testing.T) {
	root := t.TempDir()
	if _, err := dshgen.MigratedPair(root, "s-mig", "/w", dshgen.Raw, "Migrated"); err != nil {
		t.Fatal(err)
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	rc := New(Options{})
	if err := rc.Sync(context.Background(), title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	e, ok := title.Snapshot().Locate("s-mig")
	if !ok {
		t.Fatal("s-mig not indexed")
	}
	p, err := dshlog.ReadProjection(context.Background(), e)
	if err != nil || len(p.Messages) == 0 {
		t.Fatalf("projection: %v %+v", err, p)
	}
	if p.FormatVersion != 4 {
		t.Errorf("projection read format %d, want the v4 generation", p.FormatVersion)
	}
	word := strings.Fields(p.Messages[len(p.Messages)-1].Text)[0]
	res, err := rc.Search(context.Background(), Query{Text: word})
	if err != nil || len(res) != 1 {
		t.Fatalf("search %q = %+v, %v", word, res, err)
	}
}

func TestBadQueriesAreQueryErrors(t *testing.T) {
	st := newStore(t, dshgen.NewSession("s-one").UserText("text"))
	for _, q := range []string{"", "   ", `""`, "a\x00b", "\xff", strings.Repeat("a", MaxQueryBytes+1),
		manyWords(MaxTerms + 1)} {
		_, err := st.rc.Search(context.Background(), Query{Text: q})
		var qe *QueryError
		if !errors.As(err, &qe) {
			t.Errorf("query %q: err = %v, want a QueryError", q, err)
		}
	}
}

func TestSessionIDAndLimit(t *testing.T) {
	var ss []*dshgen.Session
	for i := 0; i < 5; i++ {
		ss = append(ss, dshgen.NewSession("s-"+string(rune('a'+i))).CreatedAt(int64(1000+i)).UserText("shared phrase here"))
	}
	st := newStore(t, ss...)
	res, err := st.rc.Search(context.Background(), Query{Text: "shared", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "shared limit 2", res, "s-e", "s-d")
	res, err = st.rc.Search(context.Background(), Query{Text: "shared", SessionID: "s-b"})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "shared in s-b", res, "s-b")
}

// A session searched by id is found with its createdAt (a binary search),
// with a stale one and without one (a walk), among sessions of the same
// createdAt too; an unknown id finds nothing.
func TestSessionIDFoundByCreatedAt(t *testing.T) {
	var ss []*dshgen.Session
	for i := 0; i < 9; i++ {
		ss = append(ss, dshgen.NewSession("s-"+string(rune('a'+i))).CreatedAt(int64(1000+i/3)).UserText("shared phrase here"))
	}
	st := newStore(t, ss...)
	for _, c := range []struct {
		id        string
		createdAt int64
		want      []string
	}{
		{"s-a", 1000, []string{"s-a"}},
		{"s-e", 1001, []string{"s-e"}},
		{"s-i", 1002, []string{"s-i"}},
		{"s-e", 0, []string{"s-e"}},
		{"s-e", 1002, []string{"s-e"}}, // stale: walked
		{"s-z", 1001, nil},
		{"s-z", 0, nil},
	} {
		res, err := st.rc.Search(context.Background(), Query{Text: "shared", SessionID: c.id, CreatedAt: c.createdAt})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, fmt.Sprintf("%s at %d", c.id, c.createdAt), res, c.want...)
	}
}

func manyWords(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(string(rune('a'+i%26)) + string(rune('a'+i/26)) + " ")
	}
	return b.String()
}

func TestTornZstdAppendBecomesSearchableWhenFinished(t *testing.T) {
	root := t.TempDir()
	s := dshgen.NewV4Session("s-zstd").UserText("first frame words").AssistantText("fine")
	path, err := s.Save(root, dshgen.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	st := &store{t: t, root: root, title: titles.NewIndex(root, titles.IndexOptions{}), rc: New(Options{})}
	st.sync()
	wantIDs(t, "first frame", st.search("first frame"), "s-zstd")
	s.UserText("a persimmon arrives").AssistantText("noted")
	finish, err := s.AppendTorn(path)
	if err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "persimmon while torn", st.search("persimmon"))
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	st.sync()
	wantIDs(t, "persimmon", st.search("persimmon"), "s-zstd")
	wantIDs(t, "first frame after", st.search("first frame"), "s-zstd")
}

// TestEverySessionIsIndexedAndTheTextStaysOnDisk: sessions whose text
// together far exceeds the block cache are all found, the decoded blocks
// kept stay within the cache's bound, and the text lies compressed in the
// data file rather than in memory.
func TestEverySessionIsIndexedAndTheTextStaysOnDisk(t *testing.T) {
	root := t.TempDir()
	ids := []string{"s-new", "s-mid", "s-old"}
	for i, id := range ids {
		s := dshgen.NewSession(id).CreatedAt(int64(3000 - 1000*i))
		for k := 0; k < 8; k++ {
			s = s.UserText(manyWords(4000)).AssistantText(manyWords(4000))
		}
		s = s.UserText("marker-" + id)
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	const cacheBytes = 256 << 10
	rc := New(Options{CacheBytes: cacheBytes})
	t.Cleanup(func() { rc.Close() })
	if err := rc.Sync(context.Background(), title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		res, err := rc.Search(context.Background(), Query{Text: "marker-" + id})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, id, res, id)
	}
	st := rc.Stats()
	if st.Sessions != 3 || st.Unindexed != 0 {
		t.Errorf("stats %+v: every session must be indexed", st)
	}
	if st.TextBytes < 2*cacheBytes || st.CacheBytes > cacheBytes || st.CacheBytes == 0 {
		t.Errorf("text %d bytes, cache %d bytes: want text above 2× the cache bound %d and the cache within it", st.TextBytes, st.CacheBytes, cacheBytes)
	}
	// The text is on disk, and no larger there than itself and its pair
	// filters (filterWords: filterBitsPer32 bits per 32 bytes, whole words
	// per block): these messages repeat only from one to the next (16 KB
	// apart), past the pieces S2 compresses one by one, so it is not
	// smaller either.
	filters := st.TextBytes*filterBitsPer32/(32*8) + st.TextBytes/100
	if st.StoredBytes == 0 || st.StoredBytes > st.TextBytes+st.TextBytes/50+filters {
		t.Errorf("stored %d bytes for %d bytes of text (%d of them filters at most)", st.StoredBytes, st.TextBytes, filters)
	}
}

// TestQueryMatchesBoundsTheExcerpts: Query.Matches bounds the messages
// reported per session (the first ones, in conversation order); 0 and
// anything above MaxMatches mean MaxMatches.
func TestQueryMatchesBoundsTheExcerpts(t *testing.T) {
	s := dshgen.NewSession("s-many")
	for i := range MaxMatches + 2 {
		s.UserText(fmt.Sprintf("kiwi number %d", i))
	}
	st := newStore(t, s)
	for _, c := range []struct{ ask, want int }{{1, 1}, {2, 2}, {0, MaxMatches}, {MaxMatches + 5, MaxMatches}} {
		res, err := st.rc.Search(context.Background(), Query{Text: "kiwi", Matches: c.ask})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || len(res[0].Matches) != c.want {
			t.Fatalf("Matches %d: %+v, want %d matches", c.ask, res, c.want)
		}
		if ex := res[0].Matches[0].Excerpt; ex != "kiwi number 0" {
			t.Errorf("Matches %d: first excerpt %q, want the first message", c.ask, ex)
		}
	}
}

// A session is checked and its excerpts cut in one walk of its blocks:
// the excerpts are still the first messages holding any term, in
// conversation order, when the phrase that decides the match lies only in
// the last block, and a session whose blocks never hold the phrase does
// not match although its first blocks hold the word.
func TestPhraseInTheLastBlockKeepsTheFirstExcerpts(t *testing.T) {
	filler := strings.Repeat("plain words of filler text ", blockTarget/27+1)
	late := dshgen.NewSession("s-late").CreatedAt(2000)
	never := dshgen.NewSession("s-never").CreatedAt(1000)
	for i := range 4 {
		late.UserText(fmt.Sprintf("kiwi %d %s", i, filler))
		never.UserText(fmt.Sprintf("kiwi %d %s", i, filler))
	}
	late.UserText("at last the golden kiwi")
	never.UserText("at last the golden pear, then a kiwi")
	st := newStore(t, late, never)
	if st.rc.cur.Load().order[0].id != "s-late" {
		t.Fatal("the store's order is not the one the test expects")
	}
	if refs, err := st.rc.cur.Load().order[0].refs(); err != nil || len(refs) < 5 {
		t.Fatalf("s-late has %d blocks (%v), want one per message", len(refs), err)
	}
	res := st.search(`kiwi "golden kiwi"`)
	wantIDs(t, `kiwi "golden kiwi"`, res, "s-late")
	if len(res) == 1 {
		var got []string
		for _, m := range res[0].Matches {
			got = append(got, m.Excerpt[:6])
		}
		if want := []string{"kiwi 0", "kiwi 1", "kiwi 2"}; !slices.Equal(got, want) {
			t.Errorf("excerpts begin %q, want %q", got, want)
		}
	}
	res = st.search(`"golden kiwi"`)
	wantIDs(t, `"golden kiwi"`, res, "s-late")
	if len(res) == 1 && (len(res[0].Matches) != 1 || !strings.Contains(res[0].Matches[0].Excerpt, "golden kiwi")) {
		t.Errorf("matches of the phrase alone: %+v, want the last message only", res[0].Matches)
	}
}
