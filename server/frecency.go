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

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/completion/frecency"
	"github.com/dsh-refls/dsh-refls/internal/words"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// Frecency (issue 30 item 2): the completion list learns from what was
// accepted from it. Every session and file item carries a command,
// CommandAccepted, that the client runs when the item is accepted; a
// client that runs no commands is counted by what its edit inserts (the
// fallback below). The picks of a workspace are kept by package
// completion/frecency; completion re-orders the items of one rank and of
// one match quality by them, plus a boost for the files open in the
// editor (docs/search.md, "Frecency").

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
	// runsCommands is set once the client ran CommandAccepted: from
	// then on its commands alone count picks.
	runsCommands bool
	// counted are the latest picks the fallback counted (at most
	// maxFallbackCounted), so that the command of the same accept,
	// arriving after the edit was settled, is not counted again.
	counted []countedPick
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

// countedPick is a pick the fallback counted, and when.
type countedPick struct {
	kind frecency.Kind
	key  string
	at   time.Time
}

// maxFallbackCounted bounds frecencyState.counted.
const maxFallbackCounted = 8

// sameAcceptWindow is how long after the fallback counted a pick a
// command reporting the same item is taken as the same accept: a client
// runs an item's command right after applying its edit.
const sameAcceptWindow = 10 * time.Second

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
		f.offers, f.pending = nil, nil
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

// sessionQuality is the class of a session candidate for query: the tier
// sessionref ranks it by within its group (the title or display title
// starts with the query, a word of it does, the id does, or none).
func sessionQuality(c *sessionref.Candidate, query string, sameWorkspace bool) itemQuality {
	class := classInside
	q := strings.ToLower(query)
	title := func(t string) string {
		if t == c.SessionID { // an untitled session's label is its id
			return ""
		}
		return strings.ToLower(t)
	}
	t, d := title(c.Label), title(c.DisplayTitle)
	switch {
	case strings.HasPrefix(t, q) || strings.HasPrefix(d, q):
		class = classTitlePrefix
	case words.Index(t, q, 0) >= 0 || words.Index(d, q, 0) >= 0:
		class = classWordStart
	case strings.HasPrefix(strings.ToLower(c.SessionID), q):
		class = classIDPrefix
	}
	if !sameWorkspace {
		class += classOtherWorkspace
	}
	return itemQuality{class: class}
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

// orderByFrecency re-orders order (indexes into scores and quality, in
// rank order; ranks[order[i]] is the rank of the i-th) so that within each
// band — a run of one rank whose items matched alike (sameBand) — a
// higher score comes first; equal scores keep their order. Nothing moves
// across a rank or a band, so a weak match never rises above a better one.
func orderByFrecency(order []int32, ranks []completion.Rank, scores []float64, quality []itemQuality) {
	for i := 0; i < len(order); {
		lead := order[i]
		j := i + 1
		for j < len(order) && ranks[order[j]] == ranks[lead] && sameBand(quality[lead], quality[order[j]]) {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(order[i:j], func(a, b int32) int {
				switch {
				case scores[a] > scores[b]:
					return -1
				case scores[a] < scores[b]:
					return 1
				}
				return 0
			})
		}
		i = j
	}
}

// acceptedItem is an item's data with the command that reports it
// accepted, allocated at once.
type acceptedItem struct {
	data completionData
	args [1]*completionData
	cmd  itemCommand
}

// withAccept returns the data and command of an item of data d.
func withAccept(d completionData) (*completionData, *itemCommand) {
	a := &acceptedItem{data: d}
	a.args[0] = &a.data
	a.cmd = itemCommand{Title: acceptedTitle, Command: CommandAccepted, Arguments: a.args[:]}
	return &a.data, &a.cmd
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
	return func(ctx context.Context) (any, error) { return nil, nil }, nil
}

// countAccepted counts a pick the client reported. The fallback's pending
// picks are dropped: this client runs commands, which count every pick
// (its edit was seen first, as the one the command reports).
func (s *Server) countAccepted(kind frecency.Kind, key string) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		return
	}
	f.runsCommands = true
	f.pending, f.offers = nil, nil
	now := s.now()
	for i, c := range f.counted {
		if c.kind == kind && c.key == key && now.Sub(c.at) < sameAcceptWindow {
			// The fallback counted this accept already.
			f.counted = slices.Delete(f.counted, i, i+1)
			return
		}
	}
	f.counted = nil
	s.pickLocked(kind, key)
}

// fallbackPickLocked counts a pick the fallback saw. f.mu is held.
func (s *Server) fallbackPickLocked(p pendingPick) {
	f := &s.frec
	s.pickLocked(p.kind, p.key)
	if len(f.counted) == maxFallbackCounted {
		f.counted = slices.Delete(f.counted, 0, 1)
	}
	f.counted = append(f.counted, countedPick{kind: p.kind, key: p.key, at: s.now()})
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
		f.pending, f.offers = nil, nil
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
	if f.store == nil || f.runsCommands {
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
	if f.store == nil || f.runsCommands {
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
// (or is closed, or the server stops); an edit that replaces it with
// another offered item (a menu being stepped through) or with what it
// replaced (an undo) drops it. A client that ran CommandAccepted is
// counted by its commands alone.
func (s *Server) frecencyChanged(uri, prev, next string) {
	f := &s.frec
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil || f.runsCommands {
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
	newPick, found := s.insertedItemLocked(o, hasOffer, prev, next, from, prevEnd, nextEnd)
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
		case touched:
			// Used, then removed (a message sent and cleared).
			s.fallbackPickLocked(p)
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

// insertedItemLocked looks for the item of o whose text the edit
// (next[from:nextEnd] replacing prev[from:prevEnd]) inserted at the `@` it
// was offered for: the longest offered text now there that was not there
// before and that holds the whole edit. f.mu is held.
func (s *Server) insertedItemLocked(o offer, hasOffer bool, prev, next string, from, prevEnd, nextEnd int) (pendingPick, bool) {
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
