package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/completion/frecency"
	"github.com/dsh-refls/dsh-refls/internal/words"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Frecency (issue 30 item 2): the completion list learns from what was
// accepted from it. The picks of a workspace are kept by package
// completion/frecency; completion re-orders the items of one rank and of
// one match quality by them, plus a boost for the files open in the
// editor (docs/search.md, "Frecency").
//
// Two signals report an accepted item, and each pick counts once:
//   - the edit that inserts an offered item's text at the `@` it was
//     offered for (the fallback: every client makes one, eglot's only
//     signal), counted once the document moves on with it in place;
//   - CommandAccepted, the command completionItem/resolve adds to every
//     session and file item, which a client runs when it accepts a
//     resolved item (VS Code resolves the focused item, Neovim 0.12's
//     vim.lsp.completion and the plugin resolve the accepted one).
//
// The command comes with resolve, not with the list: on every item of
// every list it made the answers of typing a third larger (31 → 41 KB for
// 69 items) and the server's CPU per keystroke a tenth higher (benche2e,
// 10,000 sessions). An edit and a command that report the same item within
// sameAcceptWindow are one pick, whichever comes first.

// Commands of frecency, announced in executeCommandProvider.
const (
	// CommandAccepted counts one pick; its one argument is the item's
	// data: {"kind":"session","sessionId":…} or {"kind":"file","path":…}.
	CommandAccepted = "dsh-refls.accepted"
	// CommandForgetPicks empties this workspace's picks and removes their
	// file; it answers {"forgotten": entries}.
	CommandForgetPicks = "dsh-refls.forgetPicks"
)

// acceptedTitle is the title of CommandAccepted on an item; clients do
// not show it.
const acceptedTitle = "count the pick"

// Tuning of frecency.
const (
	// frecencySaveDelay is how long after a pick its save waits, so that
	// the picks of one burst of typing are written once.
	frecencySaveDelay = 2 * time.Second
	// openFileBoost is what a file open in the editor adds to its score:
	// as much as one pick made now.
	openFileBoost = 1.0
	// fileScoreBand is how far below the first file of a band another
	// file's fuzzy score may lie and still be re-ordered with it: 16 is
	// what one more matched character scores in fileref's scoring (fzf's
	// scoreMatch), so items that matched alike but for bonuses of word
	// boundaries or the base name form one band.
	fileScoreBand = 16
	// sameAcceptWindow is how long an edit and a command that report the
	// same item are taken as one accept: a client runs an item's command
	// right after applying its edit.
	sameAcceptWindow = 10 * time.Second
	// maxUnpaired bounds the picks of each signal kept waiting for the
	// other.
	maxUnpaired = 8
)

// frecencyState is the server's frecency: the store of the workspace,
// the open files, and the offers and pending picks of the fallback.
type frecencyState struct {
	// mu guards every field below.
	mu    sync.Mutex
	store *frecency.Store
	// open counts the open documents of each workspace-relative path.
	open map[string]int
	// offers are the items of the last completion list of each document,
	// pending the fallback's picks not settled yet, both by URI.
	offers  map[string]offer
	pending map[string]pendingPick
	// byEdit and byCommand are the latest picks each signal counted that
	// the other has not reported yet (at most maxUnpaired each): the
	// other's report of the same item within sameAcceptWindow is the same
	// accept.
	byEdit, byCommand []signalled
	// timer is the save put off by frecencySaveDelay; saves counts the
	// timers running or scheduled, which stop waits for.
	timer   *time.Timer
	saves   sync.WaitGroup
	stopped bool
	// saveFailed is set after a failed save was logged at warn level;
	// the next failures are logged at debug level.
	saveFailed bool
}

// offer is what a completion list offered in a document: its items, and
// the byte offset of the `@` every item's edit starts at.
type offer struct {
	start int
	items []completionItem
}

// pendingPick is an item the fallback saw inserted, counted once the
// document moves on with it in place: a menu being stepped through
// inserts every item it passes over, and an undo takes it back.
type pendingPick struct {
	kind    frecency.Kind
	key     string
	start   int
	newText string
	// before is the text the insertion replaced.
	before string
}

// signalled is a pick one signal counted, and when.
type signalled struct {
	kind frecency.Kind
	key  string
	at   time.Time
}

// frecencyView is what one completion needs of frecency: the picks, the
// open files and the time, read once.
type frecencyView struct {
	table *frecency.Table
	open  map[string]int
	self  string
	now   time.Time
}

// openFrecency opens (or, with the setting off, closes) the store of the
// workspace root. A state file that cannot be used is logged once and
// replaced on the next save.
func (s *Server) openFrecency(on bool) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if !on {
		if f.store != nil {
			s.saveFrecencyLocked()
			f.store = nil
		}
		f.offers, f.pending, f.byEdit, f.byCommand = nil, nil, nil, nil
		return
	}
	if f.store != nil {
		return
	}
	p := ""
	if s.opts.FrecencyPath != nil && s.workspaceRoot != "" {
		var err error
		if p, err = s.opts.FrecencyPath(s.workspaceRoot); err != nil {
			s.logger.Warn("frecency kept in memory only", zap.Error(err))
			p = ""
		}
	}
	st, err := frecency.Open(p, s.workspaceRoot, s.now())
	if err != nil {
		s.logger.Warn(err.Error())
	}
	f.store = st
}

// frecencyFor returns the view of frecency a completion of the document
// at self (its workspace path) ranks by, or nil when there is nothing to
// rank by: the setting is off, or no pick was recorded and no other file
// is open.
func (s *Server) frecencyFor(self string) *frecencyView {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return nil
	}
	t := f.store.Table()
	others := len(f.open)
	if f.open[self] > 0 {
		others--
	}
	if t.Empty() && others == 0 {
		return nil
	}
	// open is only written under mu; the view gets a copy when there is
	// one to read (a few paths).
	var open map[string]int
	if others > 0 {
		open = make(map[string]int, len(f.open))
		for p, n := range f.open {
			open[p] = n
		}
	}
	return &frecencyView{table: t, open: open, self: self, now: s.now()}
}

// score is an item's frecency: its picks, plus openFileBoost for a file
// open in the editor.
func (v *frecencyView) score(d *completionData) float64 {
	if d == nil {
		return 0
	}
	switch d.Kind {
	case dataKindSession:
		return v.table.Score(frecency.Session, d.SessionID, v.now)
	case dataKindFile:
		sc := v.table.Score(frecency.File, d.Path, v.now)
		if v.open[d.Path] > 0 {
			sc += openFileBoost
		}
		return sc
	}
	return 0
}

// frecencyScores are the scores of items, nil when there is no view or
// no item has one (then nothing is re-ordered).
func frecencyScores(fv *frecencyView, items []completionItem) []float64 {
	if fv == nil {
		return nil
	}
	var scores []float64
	for i := range items {
		sc := fv.score(items[i].Data)
		if sc == 0 {
			continue
		}
		if scores == nil {
			scores = make([]float64, len(items))
		}
		scores[i] = sc
	}
	return scores
}

// itemQuality is how an item matched, for the bands frecency re-orders
// within: items of one rank are re-ordered only among neighbours of equal
// class (and, for files, a fuzzy score within fileScoreBand of the
// band's first).
type itemQuality struct {
	class int
	score int
	file  bool
}

// Classes of itemQuality. Sessions: the match tier of their title or id
// (sessionref's order within a group) and whether they are of this
// workspace; files: an exact base name, or the fuzzy rest.
const (
	classTitlePrefix = iota
	classWordStart
	classIDPrefix
	classInside
	classOtherWorkspace = 8 // added to a session's tier
	classExactFile      = 16
	classFuzzyFile      = 17
	classBody           = 18
)

// itemRef says where an item of a completion list came from: a session
// candidate (its index), a body match, or a file candidate (its index).
type itemRef struct {
	kind uint8
	i    int32
}

// Kinds of itemRef.
const (
	refSession = iota + 1
	refBody
	refFile
)

// itemMatches are the candidates a completion list was made of, for the
// match quality of the items frecency re-orders: computed only for the
// items it looks at (orderByFrecency), so that a list whose picks are all
// at its top costs no case folding of titles.
type itemMatches struct {
	query     string // lower-cased, for sessions
	fileQuery string // as typed, for files
	sessions  []titles.Candidate
	files     []FileCandidate
	refs      []itemRef // one per item of the list, in the list's order
}

// quality is how the i-th item of the list matched.
func (m *itemMatches) quality(i int32) itemQuality {
	r := m.refs[i]
	switch r.kind {
	case refSession:
		c := &m.sessions[r.i]
		return sessionQuality(c, m.query, c.SameWorkspace)
	case refFile:
		return fileQuality(&m.files[r.i], m.fileQuery)
	}
	return itemQuality{class: classBody}
}

// sessionQuality is the class of a session candidate for the lower-cased
// query q: the tier sessionref ranks it by within its group (the title
// or display title starts with the query, a word of it does, the id does,
// or none).
func sessionQuality(c *titles.Candidate, q string, sameWorkspace bool) itemQuality {
	class := classInside
	// An untitled session's label and display title are its id.
	label, display := c.Label, c.DisplayTitle
	if label == c.SessionID {
		label = ""
	}
	if display == c.SessionID || display == label {
		display = ""
	}
	switch {
	case q == "" || hasFoldedPrefix(label, q) || hasFoldedPrefix(display, q):
		class = classTitlePrefix
	case words.Index(strings.ToLower(label), q, 0) >= 0 || (display != "" && words.Index(strings.ToLower(display), q, 0) >= 0):
		class = classWordStart
	case hasFoldedPrefix(c.SessionID, q):
		class = classIDPrefix
	}
	if !sameWorkspace {
		class += classOtherWorkspace
	}
	return itemQuality{class: class}
}

// hasFoldedPrefix reports whether strings.ToLower(s) starts with q (lower
// case): without folding all of s, and without allocating when the part of
// s compared is ASCII.
func hasFoldedPrefix(s, q string) bool {
	if len(s) < len(q) {
		return strings.HasPrefix(strings.ToLower(s), q) // folding may lengthen s
	}
	for i := 0; i < len(q); i++ {
		b := s[i]
		if b >= utf8.RuneSelf || q[i] >= utf8.RuneSelf {
			return strings.HasPrefix(strings.ToLower(s), q)
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != q[i] {
			return false
		}
	}
	return true
}

// fileQuality is the class of a file candidate for query.
func fileQuality(f *FileCandidate, query string) itemQuality {
	if query != "" && strings.EqualFold(path.Base(f.Path), query) {
		return itemQuality{class: classExactFile, score: f.Score, file: true}
	}
	return itemQuality{class: classFuzzyFile, score: f.Score, file: true}
}

// sameBand reports whether b may be re-ordered with the band whose first
// item is lead.
func sameBand(lead, b itemQuality) bool {
	if lead.class != b.class {
		return false
	}
	return !lead.file || lead.score-b.score <= fileScoreBand
}

// orderByFrecency re-orders order (indexes into scores, in rank order;
// ranks[order[i]] is the rank of the i-th; quality(i) says how item i
// matched) so that within each band — a run of one rank whose items
// matched alike (sameBand with the run's first) — a higher score comes
// first; equal scores keep their order. Nothing moves across a rank or a
// band, so a weak match never rises above a better one. Only what lies
// above the last scored item of a rank is looked at: below it nothing
// moves.
func orderByFrecency(order []int32, ranks []completion.Rank, scores []float64, quality func(int32) itemQuality) {
	for i := 0; i < len(order); {
		k := i + 1
		last := -1
		if scores[order[i]] > 0 {
			last = i
		}
		for k < len(order) && ranks[order[k]] == ranks[order[i]] {
			if scores[order[k]] > 0 {
				last = k
			}
			k++
		}
		for b := i; b < last; {
			lead := quality(order[b])
			e := b + 1
			for e <= last && sameBand(lead, quality(order[e])) {
				e++
			}
			if e-b > 1 {
				slices.SortStableFunc(order[b:e], func(x, y int32) int {
					switch {
					case scores[x] > scores[y]:
						return -1
					case scores[x] < scores[y]:
						return 1
					}
					return 0
				})
			}
			b = e
		}
		i = k
	}
}

// acceptCommand adds CommandAccepted to a resolved item of data (with
// the setting on, for a session or a file).
func (s *Server) acceptCommand(item map[string]json.RawMessage, data completionData) error {
	if _, _, ok := pickOf(&data); !ok || !s.config().Frecency {
		return nil
	}
	raw, err := json.Marshal(command{Title: acceptedTitle, Command: CommandAccepted, Arguments: []any{data}})
	if err != nil {
		return fmt.Errorf("encoding the accepted command: %w", err)
	}
	item["command"] = raw
	return nil
}

// pickOf is the frecency key of an item's data; ok is false for data that
// names neither a session nor a file.
func pickOf(d *completionData) (kind frecency.Kind, key string, ok bool) {
	if d == nil {
		return 0, "", false
	}
	switch d.Kind {
	case dataKindSession:
		return frecency.Session, d.SessionID, d.SessionID != ""
	case dataKindFile:
		return frecency.File, d.Path, d.Path != ""
	}
	return 0, "", false
}

// acceptedCall runs CommandAccepted.
func (s *Server) acceptedCall(args []json.RawMessage) (call, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s takes one argument, the item's data; got %d", CommandAccepted, len(args))
	}
	var d completionData
	if err := json.Unmarshal(args[0], &d); err != nil {
		return nil, fmt.Errorf("the argument of %s must be the item's data: %w", CommandAccepted, err)
	}
	kind, key, ok := pickOf(&d)
	if !ok || !frecency.ValidKey(key) {
		return nil, fmt.Errorf("the argument of %s names no session or file that can be counted", CommandAccepted)
	}
	// Counted in wire order, before any later completion is answered.
	s.countAccepted(kind, key)
	return func(context.Context) (any, error) { return nil, nil }, nil
}

// countAccepted counts a pick the client reported by its command, unless
// the edit of the same accept was seen: pending (it is counted now, once)
// or counted already.
func (s *Server) countAccepted(kind frecency.Kind, key string) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return
	}
	for uri, p := range f.pending {
		if p.kind == kind && p.key == key {
			delete(f.pending, uri)
			s.pickLocked(kind, key)
			return
		}
	}
	if takeSignalled(&f.byEdit, kind, key, s.now()) {
		return
	}
	s.pickLocked(kind, key)
	f.byCommand = addSignalled(f.byCommand, kind, key, s.now())
}

// fallbackPickLocked counts a pick the fallback saw, unless the command
// of the same accept counted it already. f.mu is held.
func (s *Server) fallbackPickLocked(p pendingPick) {
	f := &s.frec
	if takeSignalled(&f.byCommand, p.kind, p.key, s.now()) {
		return
	}
	s.pickLocked(p.kind, p.key)
	f.byEdit = addSignalled(f.byEdit, p.kind, p.key, s.now())
}

// takeSignalled removes from *list the pick of key counted within
// sameAcceptWindow before now, and reports whether there was one.
func takeSignalled(list *[]signalled, kind frecency.Kind, key string, now time.Time) bool {
	for i, c := range *list {
		if c.kind == kind && c.key == key && now.Sub(c.at) < sameAcceptWindow {
			*list = slices.Delete(*list, i, i+1)
			return true
		}
	}
	return false
}

// addSignalled appends a pick to list, dropping the oldest past
// maxUnpaired.
func addSignalled(list []signalled, kind frecency.Kind, key string, now time.Time) []signalled {
	if len(list) == maxUnpaired {
		list = slices.Delete(list, 0, 1)
	}
	return append(list, signalled{kind: kind, key: key, at: now})
}

// pickLocked records a pick and schedules its save. f.mu is held.
func (s *Server) pickLocked(kind frecency.Kind, key string) {
	f := &s.frec
	if f.store == nil || !f.store.Pick(kind, key, s.now()) {
		return
	}
	if f.stopped || f.timer != nil || f.store.Path() == "" {
		return
	}
	f.saves.Add(1)
	f.timer = time.AfterFunc(frecencySaveDelay, func() {
		defer f.saves.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.timer = nil
		s.saveFrecencyLocked()
	})
}

// saveFrecencyLocked saves the store when it holds unsaved picks. f.mu is
// held.
func (s *Server) saveFrecencyLocked() {
	f := &s.frec
	if f.store == nil || !f.store.Dirty() {
		return
	}
	if err := f.store.Save(s.now()); err != nil {
		level := zap.WarnLevel
		if f.saveFailed {
			level = zap.DebugLevel
		}
		f.saveFailed = true
		s.logger.Log(level, "saving the frecency state failed", zap.Error(err))
		return
	}
	f.saveFailed = false
}

// forgetPicksCall runs CommandForgetPicks.
func (s *Server) forgetPicksCall() (call, error) {
	return func(ctx context.Context) (any, error) {
		f := &s.frec
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.store == nil {
			return map[string]int{"forgotten": 0}, nil
		}
		n := f.store.Table().Len()
		f.pending, f.offers, f.byEdit, f.byCommand = nil, nil, nil, nil
		if err := f.store.Forget(); err != nil {
			return nil, err
		}
		s.logger.Info("frecency state forgotten", zap.Int("entries", n))
		return map[string]int{"forgotten": n}, nil
	}, nil
}

// stopFrecency saves what was picked as the server stops: the pending
// picks still in place first, then the store, waiting for a save under
// way.
func (s *Server) stopFrecency() {
	f := &s.frec
	f.mu.Lock()
	f.stopped = true
	if f.timer != nil && f.timer.Stop() {
		f.saves.Done()
	}
	f.timer = nil
	f.mu.Unlock()
	f.saves.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for uri, p := range f.pending {
		if doc, ok := s.docs.get(uri); ok && strings.HasPrefix(doc.Text[min(p.start, len(doc.Text)):], p.newText) {
			s.fallbackPickLocked(p)
		}
	}
	f.pending = nil
	s.saveFrecencyLocked()
}

// frecencyOpened and frecencyClosed keep the open files' boost.
func (s *Server) frecencyOpened(uri string) {
	p := s.documentPath(uri)
	if p == "" {
		return
	}
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		f.open = map[string]int{}
	}
	f.open[p]++
}

func (s *Server) frecencyClosed(uri, last string) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := s.documentPath(uri); p != "" && f.open[p] > 0 {
		if f.open[p]--; f.open[p] == 0 {
			delete(f.open, p)
		}
	}
	if pp, ok := f.pending[uri]; ok {
		if strings.HasPrefix(last[min(pp.start, len(last)):], pp.newText) {
			s.fallbackPickLocked(pp)
		}
		delete(f.pending, uri)
	}
	delete(f.offers, uri)
}

// rememberOffer keeps the items a completion offered in the document at
// uri, for the fallback; a pending pick of that document still in place
// is counted first (the person moved on to another mention).
func (s *Server) rememberOffer(uri, text string, start int, items []completionItem) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return
	}
	if p, ok := f.pending[uri]; ok && p.start != start {
		if strings.HasPrefix(text[min(p.start, len(text)):], p.newText) {
			s.fallbackPickLocked(p)
		}
		delete(f.pending, uri)
	}
	if f.offers == nil {
		f.offers = map[string]offer{}
	}
	f.offers[uri] = offer{start: start, items: items}
}

// frecencyWatches reports whether the fallback looks at the changes of the
// document at uri: a completion offered items there, or a pick there is
// pending.
func (s *Server) frecencyWatches(uri string) bool {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return false
	}
	_, o := f.offers[uri]
	_, p := f.pending[uri]
	return o || p
}

// frecencyChanged is the fallback, run after each change of a document:
// an edit that inserts exactly the text of an item the last completion
// offered there, at the `@` it was offered for, is a pick of that item.
// It is counted once the document changes again with the item in place
// (or is closed, or the server stops, or a completion is asked for
// another `@`); an edit that replaces it with another offered item (a
// menu being stepped through) or with what it replaced (an undo) drops
// it. Typing an offered text out to its last character is an insertion
// of it too.
func (s *Server) frecencyChanged(uri, prev, next string) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return
	}
	o, hasOffer := f.offers[uri]
	p, hasPending := f.pending[uri]
	if !hasOffer && !hasPending {
		return
	}
	// The edit: next[from:nextEnd] replaced prev[from:prevEnd].
	from := 0
	for from < len(prev) && from < len(next) && prev[from] == next[from] {
		from++
	}
	tail := 0
	for tail < len(prev)-from && tail < len(next)-from && prev[len(prev)-1-tail] == next[len(next)-1-tail] {
		tail++
	}
	if from == len(prev) && from == len(next) {
		return // no change
	}
	prevEnd, nextEnd := len(prev)-tail, len(next)-tail
	newPick, found := insertedItem(o, hasOffer, prev, next, from, prevEnd, nextEnd)
	if hasPending {
		end := p.start + len(p.newText)
		touched := (from < end && prevEnd > p.start) || (from == prevEnd && from > p.start && from < end)
		still := strings.HasPrefix(next[min(p.start, len(next)):], p.newText)
		switch {
		case !touched && still:
			// The document moved on with the item in place.
			s.fallbackPickLocked(p)
		case touched && still:
			// Edited inside it, still in place: wait.
			return
		case found && newPick.start == p.start:
			// Replaced by another item: a menu stepped through.
			newPick.before = p.before
		case strings.HasPrefix(next[min(p.start, len(next)):], p.before):
			// Undone, or stepped back to what was typed.
		case touched && (from < p.start || prevEnd > end):
			// Used, then removed with the text around it (a message sent
			// and cleared).
			s.fallbackPickLocked(p)
		case touched:
			// Removed, or part of it, and nothing else: a menu stepping to
			// its next item may delete one item before it inserts the next
			// (two changes when the client's debounce falls between them),
			// and a mention deleted key by key ends here too. Wait for the
			// next change: another item at the same `@` replaces it.
			return
		default:
			// Text inserted before it moved it: wait.
			return
		}
		delete(f.pending, uri)
	}
	if found {
		if f.pending == nil {
			f.pending = map[string]pendingPick{}
		}
		f.pending[uri] = newPick
	}
}

// insertedItem looks for the item of o whose text the edit
// (next[from:nextEnd] replacing prev[from:prevEnd]) inserted at the `@` it
// was offered for: the longest offered text now there that was not there
// before and that holds the whole edit.
func insertedItem(o offer, hasOffer bool, prev, next string, from, prevEnd, nextEnd int) (pendingPick, bool) {
	if !hasOffer || from < o.start || o.start > len(prev) || o.start > len(next) {
		return pendingPick{}, false
	}
	best, bestText := -1, ""
	for i := range o.items {
		nt := editNewText(o.items[i].TextEdit)
		if len(nt) <= len(bestText) || nextEnd > o.start+len(nt) {
			continue
		}
		if strings.HasPrefix(next[o.start:], nt) && !strings.HasPrefix(prev[o.start:], nt) {
			if _, _, ok := pickOf(o.items[i].Data); ok {
				best, bestText = i, nt
			}
		}
	}
	if best < 0 {
		return pendingPick{}, false
	}
	kind, key, _ := pickOf(o.items[best].Data)
	return pendingPick{kind: kind, key: key, start: o.start, newText: bestText, before: prev[o.start:max(prevEnd, o.start)]}, true
}

// editNewText is the text an item's edit inserts.
func editNewText(edit any) string {
	switch e := edit.(type) {
	case textEdit:
		return e.NewText
	case insertReplaceEdit:
		return e.NewText
	}
	return ""
}

// frecencyStatus is the frecency part of dsh/status.
type frecencyStatus struct {
	Enabled bool `json:"enabled"`
	// Entries is how many sessions and files have picks; Picks how many
	// picks they have had.
	Entries int `json:"entries"`
	Picks   int `json:"picks"`
	// StateFile is where they are saved, absent when kept in memory.
	StateFile string `json:"stateFile,omitempty"`
}

func (s *Server) frecencyStatus() *frecencyStatus {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return &frecencyStatus{}
	}
	t := f.store.Table()
	return &frecencyStatus{Enabled: true, Entries: t.Len(), Picks: t.Picks(), StateFile: f.store.Path()}
}
