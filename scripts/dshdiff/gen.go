package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Text pieces random messages, titles and labels are made of: ASCII words,
// CJK, astral characters, `<` and closing tags, case-mapping traps (final
// sigma, dotted I), quotes, backslashes, line and paragraph separators and
// control characters.
var pieces = []string{
	"plan", "billing", "deploy", "Fix", "the", "tests", " ", " ", " ", "\n",
	"你好", "世界", "日本語のテキスト", "😀", "𝄞", "👩‍💻", "<", "</referenced-sessions>", "<b>",
	"Λόγος ΟΣ", "σ", "ς", "İstanbul", "i", "I", "ß", "é", "e\u0301", "\"quoted\"", `back\slash`,
	"\u2028", "\u2029", "\t", "\x01", "&amp;", "…", "]", "[", "(", ")", "@",
}

// rawPieces are JSON string bodies only a raw event can carry: lone
// surrogates, invalid UTF-8 (single bytes, maximal invalid sequences,
// truncated sequences) and escapes of astral characters.
var rawPieces = []string{
	`\ud800`, `\udfff`, `a\ud83dz`, `\ud83d\ude00`, "x\xff\xfey", "\xc3", "\xe2\x82", "\xf0\x9f\x98",
	"\xed\xa0\x80", "\xc0\xaf", `\u003c`, `plain`, "ok ",
}

// cwds are the working directories sessions are created in; the target
// runs in the first.
var cwds = []string{"/home/dev/alpha", "/home/dev/beta", "/home/dev/gamma dir/ünï", "/home/dev/ΛΟΓΟΣ"}

// randText is random text of up to n pieces.
func randText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range 1 + r.IntN(n) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randLong is random text of roughly size bytes.
func randLong(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randID is a session id: mostly UUID-like, sometimes case twins (`b…`,
// `B…`) that tie on createdAt, non-ASCII or path-like.
func randID(r *rand.Rand, i int) string {
	switch r.IntN(8) {
	case 0:
		return fmt.Sprintf("b-%d", i)
	case 1:
		return fmt.Sprintf("B-%d", i)
	case 2:
		return fmt.Sprintf("é-sess-%d", i)
	case 3:
		return fmt.Sprintf("team/σ-%d", i)
	default:
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()&(1<<48-1))
	}
}

// genSession describes one generated session of a store.
type genSession struct {
	id     string
	cwd    string
	hasCwd bool
	titles []string
}

// genStore is a generated store and what the cases may refer to.
type genStore struct {
	root     string
	enc      dshgen.Encoding
	targetID string
	target   string // cwd of the target, "" for none
	sessions []genSession
	notes    []string
}

// damage kinds a session may get.
const (
	damageNone = iota
	damageGarbageMid
	damageGarbageEnd
	damageSeqGap
	damageSeqDuplicate
	damageTorn
	damageRawText
	damageKinds
)

// buildSession writes the events of one random session into s and returns
// the damage it chose to apply after saving (only torn tails are applied
// after saving).
func buildSession(r *rand.Rand, s *dshgen.Session, g *genSession) (torn bool, notes []string) {
	damage := damageNone
	if r.IntN(3) == 0 {
		damage = 1 + r.IntN(damageKinds-1)
	}
	longText := func() string {
		if r.IntN(4) == 0 {
			return randLong(r, 200+r.IntN(3000))
		}
		return randText(r, 12)
	}
	turns := r.IntN(5)
	firstSurface, lastSurface := int64(-1), int64(-1)
	note := func(seq int64) {
		if firstSurface < 0 {
			firstSurface = seq
		}
		lastSurface = seq
	}
	damageAt := r.IntN(turns + 1)
	checkpointAt := -1
	if r.IntN(4) == 0 {
		checkpointAt = r.IntN(turns + 1)
	}
	for t := range turns {
		if t == damageAt {
			notes = append(notes, applyDamage(r, s, damage, false)...)
		}
		if t == checkpointAt && firstSurface >= 0 {
			s.Checkpoint("<compacted-summary>"+randText(r, 6)+"</compacted-summary>", firstSurface, lastSurface)
			note(s.LastSeq())
			firstSurface = s.LastSeq()
			notes = append(notes, "checkpoint")
		}
		s.Turn(func(tb *dshgen.Turn) {
			switch r.IntN(24) {
			case 0, 1, 2, 3:
				tb.UserTexts(randText(r, 5), longText())
			case 4:
				// dsh 0.1.1 refuses this legacy shape (no surfaceOp);
				// dsh-refls reads it on purpose.
				tb.Steering(randText(r, 6))
			default:
				tb.UserText(longText())
			}
			note(s.LastSeq())
			if r.IntN(4) == 0 {
				tb.UserPlugin("workspace", randText(r, 5))
				note(s.LastSeq())
			}
			if r.IntN(6) == 0 {
				tb.SessionReference(randText(r, 5))
				note(s.LastSeq())
			}
			tb.Step(func() {
				if r.IntN(3) == 0 {
					tb.TextChunks(randText(r, 3), randText(r, 3))
				}
				switch r.IntN(5) {
				case 0:
					tb.AssistantReasoning(randText(r, 4), longText())
				case 1:
					tb.AssistantLegacy(longText())
				case 2:
					tb.AssistantToolCall("call_1", "read", `{"path":"a"}`)
					note(s.LastSeq())
					tb.ToolResult("call_1", randText(r, 4), false)
				case 3:
					tb.AssistantText("")
				default:
					tb.AssistantText(longText())
				}
				note(s.LastSeq())
			})
			if r.IntN(3) == 0 {
				title := randText(r, 4)
				if r.IntN(8) == 0 {
					title = ""
				}
				tb.Title(title, []string{"fallback", "provider", "user"}[r.IntN(3)])
				g.titles = append(g.titles, title)
			}
		})
	}
	if damageAt == turns && damage != damageTorn {
		notes = append(notes, applyDamage(r, s, damage, true)...)
	}
	if r.IntN(3) == 0 {
		// An open last turn: dsh closes it with synthetic events.
		s.TurnStart()
		s.UserText(longText())
		if r.IntN(2) == 0 {
			s.StepStart()
			s.TextChunks(randText(r, 3))
		}
		if r.IntN(3) == 0 {
			s.AssistantToolCall("call_9", "bash", `{"cmd":"ls"}`)
		}
		notes = append(notes, "open-turn")
	}
	return damage == damageTorn, notes
}

// applyDamage writes one kind of damage into the log at the current point.
func applyDamage(r *rand.Rand, s *dshgen.Session, damage int, atEnd bool) []string {
	switch damage {
	case damageGarbageMid, damageGarbageEnd:
		s.RawLine([]string{"garbage{", "{\"type\":", "not json", "[]", "{}"}[r.IntN(5)])
		if atEnd {
			return []string{"garbage-end"}
		}
		return []string{"garbage-mid"}
	case damageSeqGap:
		s.SkipSeq(int64(1 + r.IntN(3)))
		s.UserText(randText(r, 4))
		return []string{"seq-gap"}
	case damageSeqDuplicate:
		if s.LastSeq() < 0 {
			return nil
		}
		s.SkipSeq(-1)
		s.UserText(randText(r, 4))
		return []string{"seq-duplicate"}
	case damageRawText:
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(rawPieces[r.IntN(len(rawPieces))])
		}
		if r.IntN(8) == 0 {
			s.RawUserText([]string{"123", "null", `{"a":1}`}[r.IntN(3)], false)
			return []string{"non-string-text"}
		}
		s.RawUserText(b.String(), true)
		return []string{"raw-text"}
	}
	return nil
}

// generateStore writes one random store under dir.
func generateStore(r *rand.Rand, dir string, n int) (*genStore, error) {
	st := &genStore{root: filepath.Join(dir, "sessions"), enc: dshgen.Encoding(r.IntN(2))}
	st.targetID = fmt.Sprintf("target-%d", r.IntN(1000))
	if r.IntN(5) > 0 {
		st.target = cwds[0]
	}
	used := map[string]bool{}
	for i := range 1 + r.IntN(n) {
		id := randID(r, i)
		if used[id] {
			continue
		}
		used[id] = true
		g := genSession{id: id}
		s := dshgen.NewSession(id).CreatedAt(dshgen.DefaultCreatedAt + int64(r.IntN(4))*1000)
		if r.IntN(5) > 0 {
			g.cwd, g.hasCwd = cwds[r.IntN(len(cwds))], true
			s.Cwd(g.cwd)
		} else {
			s.NoCwd()
		}
		torn, notes := buildSession(r, s, &g)
		if err := s.Err(); err != nil {
			// The random builder asked for something the generator refuses
			// (a checkpoint over a range it does not see): skip the session.
			st.notes = append(st.notes, "generator-skip")
			continue
		}
		path, err := s.Save(st.root, st.enc)
		if err != nil {
			return nil, fmt.Errorf("saving session %q: %w", id, err)
		}
		if torn {
			s.Turn(func(tb *dshgen.Turn) {
				tb.UserText(randText(r, 8))
				tb.AssistantText(randText(r, 8))
			})
			if _, err := s.AppendTorn(path); err != nil {
				return nil, fmt.Errorf("tearing session %q: %w", id, err)
			}
			notes = append(notes, "torn-tail")
		}
		st.notes = append(st.notes, notes...)
		st.sessions = append(st.sessions, g)
	}
	return st, nil
}

// uriOf is the canonical URI of id (§2.1), written independently of the code
// under test: base64url of the JSON string. Ids here hold no characters that
// JavaScript and Go escape differently.
func uriOf(id string) string {
	return "dsh-session:" + base64.RawURLEncoding.EncodeToString([]byte(`"`+id+`"`))
}

// escapeLabel escapes `\` and `]` in a mention label.
func escapeLabel(l string) string {
	return strings.NewReplacer(`\`, `\\`, `]`, `\]`).Replace(l)
}

// randLabel is a mention label: often empty or holding escapes.
func randLabel(r *rand.Rand) string {
	switch r.IntN(5) {
	case 0:
		return ""
	case 1:
		return "a]b\\c"
	default:
		return strings.ReplaceAll(randText(r, 3), "\n", " ")
	}
}

// uncappedSuffix names the uncapped twin of a capped candidate case.
const uncappedSuffix = "-uncapped"

// genCases makes the candidate and prepare cases of one store.
func genCases(r *rand.Rand, st *genStore, storeIndex int) ([]candidateCase, []prepareCase) {
	var cands []candidateCase
	queries := []string{"", "σ", "ς", "İ", "i", "b", "B", "é", "alpha", "ΛΟΓΟΣ", "zzz-none"}
	for _, s := range st.sessions {
		for _, t := range s.titles {
			if t != "" {
				rs := []rune(t)
				a := r.IntN(len(rs))
				b := a + 1 + r.IntN(len(rs)-a)
				q := string(rs[a:b])
				if r.IntN(2) == 0 {
					q = strings.ToUpper(q)
				}
				queries = append(queries, q)
			}
		}
		if len(s.id) > 3 {
			queries = append(queries, s.id[:3])
		}
	}
	for i := range 8 {
		q := queries[r.IntN(len(queries))]
		if i == 0 {
			q = ""
		}
		c := candidateCase{ID: fmt.Sprintf("s%d-c%d", storeIndex, i), Query: q, Limit: []int{1, 3, 50, 1000}[r.IntN(4)]}
		cands = append(cands, c)
		if q != "" && c.Limit < 1000 {
			// The same query without a binding limit: when only the capped
			// lists differ, dsh-refls' ranking chose among the same matches.
			cands = append(cands, candidateCase{ID: c.ID + uncappedSuffix, Query: q, Limit: 100000})
		}
	}
	var preps []prepareCase
	pick := func() string {
		if len(st.sessions) == 0 {
			return "missing-session"
		}
		switch r.IntN(40) {
		case 0, 1:
			return "missing-session"
		case 2:
			return ""
		case 3:
			return st.targetID
		}
		return st.sessions[r.IntN(len(st.sessions))].id
	}
	for i := range 10 {
		var b strings.Builder
		b.WriteString(randText(r, 3))
		for range 1 + r.IntN(3) + r.IntN(2)*r.IntN(2) {
			b.WriteString(" @[" + escapeLabel(randLabel(r)) + "](" + uriOf(pick()) + ") ")
			b.WriteString(randText(r, 2))
		}
		budget := []int{1, 1 + r.IntN(300), 300 + r.IntN(2000), 2000 + r.IntN(20000), 65536}[r.IntN(5)]
		preps = append(preps, prepareCase{ID: fmt.Sprintf("s%d-p%d", storeIndex, i), Text: b.String(), MaxReferenceBytes: budget})
	}
	return cands, preps
}

// existingStore describes a store that is already on disk (recorded logs),
// so the same random cases run on it. Its encoding is that of its logs: dsh
// 0.1.1 reads one encoding per root.
func existingStore(ctx context.Context, root string) (*genStore, error) {
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(ctx, nil); err != nil {
		return nil, fmt.Errorf("indexing %s: %w", root, err)
	}
	st := &genStore{root: root, enc: dshgen.Raw, targetID: "target-recorded", target: cwds[0]}
	for _, e := range ix.Snapshot().Sessions {
		g := genSession{id: e.ID, cwd: e.Cwd, hasCwd: e.HasCwd}
		if e.HasTitle {
			g.titles = []string{e.Title}
		}
		if e.Encoding == layout.EncodingZstd {
			st.enc = dshgen.Zstd
		}
		st.sessions = append(st.sessions, g)
	}
	if len(st.sessions) == 0 {
		return nil, fmt.Errorf("no sessions under %s", root)
	}
	return st, nil
}
