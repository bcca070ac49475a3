package recall

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// Bounds of a query.
const (
	// MaxQueryBytes bounds the text of a query.
	MaxQueryBytes = 1024
	// MaxTerms bounds how many words and phrases a query holds.
	MaxTerms = 16
	// DefaultLimit is how many sessions a search returns by default;
	// MaxLimit bounds what a caller may ask for.
	DefaultLimit = 20
	MaxLimit     = 1000
	// MaxMatches bounds the matched messages reported per session.
	MaxMatches = 3
)

// Query is one search.
type Query struct {
	// Text holds words, all of which must occur in one session, and
	// "quoted phrases", which must occur as written (case aside).
	Text string
	// Limit bounds the sessions returned; 0 means DefaultLimit.
	Limit int
	// SessionID, when set, searches that session only. CreatedAt, when
	// not 0, is its createdAt as the title index lists it: the session
	// is then found by a binary search of the newest-first order instead
	// of a walk of it (2.4 ms at 100,000 sessions, busy machine).
	SessionID string
	CreatedAt int64
	// Matches bounds the matched messages reported per session, from 1
	// to MaxMatches; 0 means MaxMatches. Completion shows one: asking
	// for one spares the excerpts of the others.
	Matches int
	// WordStart counts a word or phrase only where it begins a word of
	// the text (internal/words): completion asks for it, where "rate"
	// inside "generated" or "half-migrated" is noise, not a reason to
	// offer a session. Excerpts and ranges then show such hits only.
	WordStart bool
}

// Result is one session that holds every term of a query.
type Result struct {
	SessionID string
	CreatedAt int64
	// Matches are up to MaxMatches messages holding a term, in
	// conversation order.
	Matches []Match
}

// Match is one message holding a term, shown as an excerpt.
type Match struct {
	Role string `json:"role"`
	Seq  int64  `json:"seq"`
	// Excerpt is a short window of the message around the first hit,
	// made safe to show (excerpt.go).
	Excerpt string `json:"excerpt"`
	// Ranges are the hits inside Excerpt, as [start, end) offsets in
	// UTF-16 code units (JavaScript string indexes, LSP's default).
	Ranges [][2]int `json:"ranges"`
}

// QueryError is a query that cannot be searched.
type QueryError struct{ Reason string }

// Error says why the query cannot be searched.
func (e *QueryError) Error() string { return "invalid search query: " + e.Reason }

// parseQuery splits text into folded terms: words separated by white
// space, and phrases between double quotes (an unclosed quote runs to the
// end). Duplicate terms are dropped.
func parseQuery(f *folder, text string) ([]string, error) {
	if len(text) > MaxQueryBytes {
		return nil, &QueryError{Reason: fmt.Sprintf("query of %d bytes exceeds %d bytes", len(text), MaxQueryBytes)}
	}
	if strings.ContainsRune(text, 0) {
		return nil, &QueryError{Reason: "query contains a NUL character"}
	}
	if !utf8.ValidString(text) {
		return nil, &QueryError{Reason: "query is not valid UTF-8"}
	}
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		t = f.fold(t)
		if t != "" && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for rest := text; rest != ""; {
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				add(rest[1:])
				break
			}
			add(rest[1 : 1+end])
			rest = rest[end+2:]
			continue
		}
		r, n := utf8.DecodeRuneInString(rest)
		if unicode.IsSpace(r) {
			rest = rest[n:]
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(rest)
		}
		add(rest[:end])
		rest = rest[end:]
	}
	if len(terms) == 0 {
		return nil, &QueryError{Reason: "query holds no words"}
	}
	if len(terms) > MaxTerms {
		return nil, &QueryError{Reason: fmt.Sprintf("query holds %d words and phrases; at most %d", len(terms), MaxTerms)}
	}
	return terms, nil
}

// Search returns the sessions whose projected text holds every term of q,
// newest first. A word is decided by the token dictionary alone (tokens.go);
// a phrase with spaces, or a word that may lie inside a long token, is
// checked in the session's text. A bad query is a *QueryError.
func (ix *Index) Search(ctx context.Context, q Query) ([]Result, error) {
	sc := ix.takeScratch()
	defer ix.keepScratch(sc)
	f := sc.f
	terms, err := parseQuery(f, q.Text)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	matches := MaxMatches
	if q.Matches > 0 {
		matches = min(q.Matches, MaxMatches)
	}
	v := ix.cur.Load()
	sp := &searchPlan{plans: make([]termPlan, len(terms)), terms: terms, matches: matches, wordStart: q.WordStart}
	plans := sp.plans
	for i, t := range terms {
		plans[i] = v.plan(t, q.WordStart)
	}
	var out []Result
	// pending[i] is set for the terms the postings could not decide for
	// the session at hand: they are looked for in its text.
	pending := make([]bool, len(terms))
	// check returns the result for d when its text holds every term,
	// reading d's blocks once (result).
	check := func(d *doc) (Result, bool) {
		clear(pending)
		for i := range plans {
			p := &plans[i]
			tok := v.tokenHit(p, d)
			switch {
			case tok && !p.spaced:
			case tok || d.long && (v.gramHit(p, d) || p.spaced && v.piecesMayHold(p, d)):
				pending[i] = true
			default:
				return Result{}, false
			}
		}
		r, ok, err := ix.result(f, sc, d, sp, pending)
		if err != nil {
			ix.markBroken(d.id, err)
			return Result{}, false
		}
		return r, ok
	}
	if q.SessionID != "" {
		// No map by id in every view (3 MB at 100,000 sessions): the
		// order is searched.
		if d := v.find(q.SessionID, q.CreatedAt); d != nil {
			if r, ok := check(d); ok {
				out = append(out, r)
			}
		}
		return out, nil
	}
	for i, d := range v.order {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", errCancelled, ctx.Err())
		}
		if r, ok := check(d); ok {
			out = append(out, r)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// find returns the current document of session id, nil when there is
// none: by a binary search of the order when createdAt is the one the
// document was read with, else by a walk of it.
func (v *view) find(id string, createdAt int64) *doc {
	if createdAt != 0 {
		i := sort.Search(len(v.order), func(i int) bool {
			d := v.order[i]
			return d.createdAt < createdAt || d.createdAt == createdAt && d.id >= id
		})
		if i < len(v.order) && v.order[i].id == id {
			return v.order[i]
		}
	}
	for _, d := range v.order {
		if d.id == id {
			return d
		}
	}
	return nil
}

// termPlan is how one term of a query is decided.
type termPlan struct {
	term string
	// spaced is set when the term holds white space (a phrase): it then
	// spans tokens and is checked in the text.
	spaced bool
	// pieces are the ids of the dictionary tokens holding each piece of
	// the term between white space; exact is the slots of tok holding a
	// token of every piece (nil: no piece, every slot).
	pieces [][]uint32
	exact  []uint64
	// grams are the trigrams of the whole term.
	grams gramPlan
	// pieceSets and pieceGrams are, for a spaced term, what exact and
	// grams are for the whole term, piece by piece: a phrase that pairs a
	// word with a piece of a token longer than maxTokenBytes has no
	// dictionary token for that piece, and the trigrams of the whole
	// phrase (white space included) lie in no long token, so it is
	// decided piece by piece (piecesMayHold). pieceGrams is looked up
	// when a session first needs it.
	pieceSets  [][]uint64
	pieceGrams []gramPlan
	// pairs, for a phrase whose pieces are one space apart (pairsOK), is
	// what a block's pair filter must hold for the block to hold it.
	pairs   pairPlan
	pairsOK bool
	// find finds the term in a block's folded text.
	find finder
}

// searchPlan is what one search asks of each session it checks.
type searchPlan struct {
	plans []termPlan
	// terms are the plans' terms, in order.
	terms []string
	// matches is how many excerpts a session gets at most; wordStart is
	// Query.WordStart.
	matches   int
	wordStart bool
}

// gramPlan is the sorted trigrams of a term or piece and set, the slots
// of v.grams holding them all (nil with ok false: every slot).
type gramPlan struct {
	grams []uint32
	set   []uint64
	ok    bool
}

// slotIn reports whether slot's bit is set in a bitset of slots.
func slotIn(set []uint64, slot int32) bool { return set[slot/64]&(1<<(uint(slot)%64)) != 0 }

// plan looks term up in the dictionary and the postings; with
// wordStart, only dictionary tokens holding a piece at a word start count.
func (v *view) plan(term string, wordStart bool) termPlan {
	p := termPlan{term: term, find: newFinder(term)}
	for _, piece := range strings.FieldsFunc(term, unicode.IsSpace) {
		p.pieces = append(p.pieces, v.dicts.containing(v.dict, piece, wordStart))
	}
	p.spaced = len(p.pieces) != 1 || strings.IndexFunc(term, unicode.IsSpace) >= 0
	if len(p.pieces) > 0 {
		words := (v.tok.n + 63) / 64
		for k, ids := range p.pieces {
			set := make([]uint64, words)
			for _, id := range ids {
				pl, _ := v.tok.get(id)
				if pl.bits != nil {
					for w, x := range pl.bits {
						set[w] |= x
					}
					continue
				}
				for _, s := range pl.list {
					set[s/64] |= 1 << (s % 64)
				}
			}
			if p.spaced {
				p.pieceSets = append(p.pieceSets, set)
				if k == 0 {
					set = slices.Clone(set)
				}
			}
			if k == 0 {
				p.exact = set
				continue
			}
			for w := range p.exact {
				p.exact[w] &= set[w]
			}
		}
	}
	p.grams = v.planGrams(term)
	if p.spaced {
		p.pairs, p.pairsOK = planPairs(v.dict, p.pieces, term)
	}
	return p
}

// planGrams looks up the distinct trigrams of s in the postings.
func (v *view) planGrams(s string) gramPlan {
	var g gramPlan
	seen := map[uint32]bool{}
	for i := 0; i+gramLen <= len(s); i++ {
		if x := gramOf(s, i); !seen[x] {
			seen[x] = true
			g.grams = append(g.grams, x)
		}
	}
	slices.Sort(g.grams)
	g.set, g.ok = v.grams.candidates(g.grams)
	return g
}

// piecesMayHold reports whether every piece of p's spaced term has a
// token of d holding it or may lie in one of d's long tokens (d has long
// tokens): d is then checked in its text.
func (v *view) piecesMayHold(p *termPlan, d *doc) bool {
	for k, ids := range p.pieces {
		if int(d.slot) < v.tok.n && slotIn(p.pieceSets[k], d.slot) ||
			int(d.slot) >= v.tok.n && intersects(ids, v.overlay[d.slot].tokens) {
			continue
		}
		if p.pieceGrams == nil {
			for _, piece := range strings.FieldsFunc(p.term, unicode.IsSpace) {
				p.pieceGrams = append(p.pieceGrams, v.planGrams(piece))
			}
		}
		if !v.gramsMayHold(&p.pieceGrams[k], d) {
			return false
		}
	}
	return true
}

// tokenHit reports whether d holds a token for every piece of p's term.
func (v *view) tokenHit(p *termPlan, d *doc) bool {
	if len(p.pieces) == 0 {
		return true
	}
	if int(d.slot) < v.tok.n {
		return slotIn(p.exact, d.slot)
	}
	o := v.overlay[d.slot]
	for _, ids := range p.pieces {
		if !intersects(ids, o.tokens) {
			return false
		}
	}
	return true
}

// gramHit reports whether the long tokens of d may hold p's term.
func (v *view) gramHit(p *termPlan, d *doc) bool { return v.gramsMayHold(&p.grams, d) }

// gramsMayHold reports whether the long tokens of d may hold the
// trigrams of g.
func (v *view) gramsMayHold(g *gramPlan, d *doc) bool {
	if !g.ok {
		return true
	}
	if int(d.slot) < v.grams.n {
		return slotIn(g.set, d.slot)
	}
	return holdsAll(v.overlay[d.slot].grams, g.grams)
}

// block returns the decoded block at ref of d: from the cache when it is
// there (scratch false), else decoded into sc (scratch true, valid until
// the next block; result caches a copy when it holds a hit). Unless blind
// (a term still looked for has no pair plan, so no filter can spare the
// block), it returns nil when the block's pair filter shows it holds
// nothing that matters (needs): only the filter of such a block is read.
func (ix *Index) block(f *folder, sc *blockScratch, d *doc, ref blockRef, needs func(filter []byte) bool, blind bool) (b *textBlock, scratch bool, err error) {
	k := cacheKey{file: d.data.id, off: ref.off}
	if b := ix.cache.get(k); b != nil {
		if !blind && !needs(b.filter) {
			ix.filtered.Add(1)
			return nil, false, nil
		}
		return b, false, nil
	}
	if !blind {
		// The filter first: kept in memory, or read alone and kept.
		filter, kept := ix.filters.get(k, sc.rec)
		if kept {
			sc.rec = filter
		} else {
			if filter, sc.rec, err = d.data.filterInto(sc.rec, ref); err != nil {
				return nil, false, err
			}
			ix.filters.put(k, filter)
		}
		if !needs(filter) {
			ix.filtered.Add(1)
			return nil, false, nil
		}
	}
	if sc.rec, err = d.data.recordInto(sc.rec, ref); err != nil {
		return nil, false, err
	}
	if b, err = sc.decode(sc.rec, ref, f); err != nil {
		return nil, false, err
	}
	ix.decoded.Add(1)
	return b, true, nil
}

// result reads the blocks of d in order, once: it reports whether its
// text holds every term marked pending (at a word start, with wordStart;
// the other terms were decided by the postings) and cuts the excerpts of
// the first messages that hold a term, at most matches of them. It stops
// once every pending term was seen and the excerpts are cut; a block that
// holds no term at all is not walked message by message, and one whose
// pair filter rules out every phrase that still matters is not decoded.
// Checking a session and then cutting its excerpts read the same blocks
// twice, and a phrase of common words often lies only in a session's
// last blocks.
func (ix *Index) result(f *folder, sc *blockScratch, d *doc, sp *searchPlan, pending []bool) (Result, bool, error) {
	plans, matches := sp.plans, sp.matches
	left := 0
	for _, p := range pending {
		if p {
			left++
		}
	}
	r := Result{SessionID: d.id, CreatedAt: d.createdAt}
	refs, err := d.refsInto(sc.refs)
	if err != nil {
		return Result{}, false, err
	}
	sc.refs = refs
	// needs reports whether a block whose pair filter is filter may hold a
	// term still looked for: a pending one, or any while excerpts are cut;
	// blind whether one of those has no pair plan.
	needs := func(filter []byte) bool {
		for i := range plans {
			if (pending[i] || len(r.Matches) < matches) && !(plans[i].pairsOK && plans[i].pairs.excludes(filter)) {
				return true
			}
		}
		return false
	}
	blind := func() bool {
		for i := range plans {
			if (pending[i] || len(r.Matches) < matches) && !plans[i].pairsOK {
				return true
			}
		}
		return false
	}
	for _, ref := range refs {
		if left == 0 && len(r.Matches) == matches {
			break
		}
		b, scratch, err := ix.block(f, sc, d, ref, needs, blind())
		if err != nil {
			return Result{}, false, err
		}
		if b == nil {
			continue
		}
		hit := false
		if len(plans) == 1 && len(r.Matches) < matches {
			// One term: the messages that hold it are the excerpts,
			// and it is seen once one is; the block is searched once.
			had := len(r.Matches)
			r.Matches = appendMatches(f, r.Matches, b, sp)
			if hit = len(r.Matches) > had; hit && pending[0] {
				pending[0] = false
				left--
			}
		} else {
			hit = walk(f, b, sp, pending, &left, &r)
		}
		if k := (cacheKey{file: d.data.id, off: ref.off}); scratch && hit && ix.cache.wants(k, b.size()) { // not copied only to be dropped
			ix.cache.offer(k, b.clone())
		}
	}
	return r, left == 0, nil
}

// walk searches b for every term still looked for (pending, or any while
// excerpts are cut), marks the pending ones it holds found and appends the
// excerpts of its messages; it reports whether b held a term.
func walk(f *folder, b *textBlock, sp *searchPlan, pending []bool, left *int, r *Result) bool {
	cut := false
	for i := range sp.plans {
		if pending[i] || len(r.Matches) < sp.matches && !cut {
			if sp.plans[i].find.index(b.folded, sp.wordStart) >= 0 {
				cut = true
				if pending[i] {
					pending[i] = false
					*left--
				}
			}
		}
	}
	if cut && len(r.Matches) < sp.matches {
		r.Matches = appendMatches(f, r.Matches, b, sp)
	}
	return cut
}

// appendMatches appends the excerpts of the messages of b that hold a
// term of sp (at a word start, with sp.wordStart), in order, until ms
// holds sp.matches of them.
func appendMatches(f *folder, ms []Match, b *textBlock, sp *searchPlan) []Match {
	for _, m := range b.msgs {
		folded := b.folded[m.fStart:m.fEnd]
		first := -1
		for i := range sp.plans {
			p := &sp.plans[i]
			// Once a hit is known, only an earlier one matters.
			hay := folded
			if first >= 0 {
				hay = folded[:min(len(folded), first+len(p.term)-1)]
			}
			if i := p.find.index(hay, sp.wordStart); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		if first < 0 {
			continue
		}
		ms = append(ms, excerptOf(f, m.text, folded, m.ascii, first, sp.terms, sp.wordStart))
		ms[len(ms)-1].Role, ms[len(ms)-1].Seq = roleOf(m.role), m.seq
		if len(ms) == sp.matches {
			break
		}
	}
	return ms
}

// roleOf is role as a string of its own: a block read into a
// blockScratch is overwritten by the next one.
func roleOf(role string) string {
	switch role {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	}
	return strings.Clone(role)
}

// containsAt reports whether s holds t, anywhere or, with wordStart, where
// a word starts (internal/words).
func containsAt(s, t string, wordStart bool) bool {
	if wordStart {
		return words.Index(s, t, 0) >= 0
	}
	return strings.Contains(s, t)
}

// indexAt is strings.Index, or words.Index with wordStart.
func indexAt(s, t string, wordStart bool) int {
	if wordStart {
		return words.Index(s, t, 0)
	}
	return strings.Index(s, t)
}
