// Package frecency remembers which mentions a person accepted from the
// completion list of a workspace, so that the list learns: a session or a
// file picked often and lately ranks above one never picked among items
// that matched the typed word alike (server/frecency.go applies it).
//
// A Store holds one workspace's picks in memory and in one small file in
// the user's cache dir (DefaultPath). It records ids and workspace-relative
// paths only, never text. Each entry's score is the recency-weighted count
// of its picks:
//
//	score(now) = Σ over picks 0.5^((now − pickedAt) / HalfLife)
//
// kept as one number and the time of the last pick (a new pick decays the
// sum to its time and adds 1), so a lookup is a map read and one Exp2.
package frecency

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Tuning and bounds of the state.
const (
	// HalfLife is how long a pick takes to count half as much: a session
	// picked ten times last month ranks like one picked once this week
	// (10 × 0.5^(30/7) ≈ 0.5, then less). Firefox's buckets and opencode's
	// 1/(1+days) weight decay in about the same weeks; an exponential keeps
	// the sum one number.
	HalfLife = 7 * 24 * time.Hour
	// MaxEntries bounds the picks kept per workspace; past it the entry
	// of the lowest score (the oldest on a tie) is dropped.
	MaxEntries = 500
	// MaxKeyBytes bounds one id or path; a longer one is not recorded.
	MaxKeyBytes = 1024
	// MaxFileBytes bounds the state file: 500 entries of the longest keys
	// fit. A larger file is not read.
	MaxFileBytes = 1 << 20
	// MinScore is the score below which an entry is dropped when saved:
	// six half-lives (six weeks) after a single pick.
	MinScore = 1.0 / 64
	// maxScore bounds a stored score: a file claiming more is corrupt
	// (a pick a second for a week stays far below it).
	maxScore = 1e7
	// maxPending bounds the picks recorded since the last save.
	maxPending = 4 * MaxEntries
)

// magic opens every state file, followed by the format version and a
// newline; formatVersion changes whenever the layout does.
const (
	magic         = "dsh-refls frecency "
	formatVersion = 1
)

// Kind says what a key names.
type Kind uint8

// The kinds of picks.
const (
	Session Kind = iota + 1 // a dsh session, by id
	File                    // a workspace path, relative, with forward slashes
)

func (k Kind) String() string {
	switch k {
	case Session:
		return "session"
	case File:
		return "file"
	}
	return "unknown"
}

func kindOf(s string) Kind {
	switch s {
	case "session":
		return Session
	case "file":
		return File
	}
	return 0
}

// entry is one key's recency-weighted count: score at the time of its
// last pick (ms since the epoch), and how many picks it has had.
type entry struct {
	score float64
	at    int64
	count int
}

// decayed is e's score at now (ms). A pick dated later than now (a clock
// set back) counts as made now.
func (e entry) decayed(now int64) float64 {
	age := now - e.at
	if age <= 0 {
		return e.score
	}
	return e.score * math.Exp2(-float64(age)/float64(HalfLife.Milliseconds()))
}

// add returns e with one more pick at ms.
func (e entry) add(ms int64) entry {
	if e.count == 0 {
		return entry{score: 1, at: ms, count: 1}
	}
	return entry{score: min(e.decayed(ms)+1, maxScore), at: max(ms, e.at), count: e.count + 1}
}

// Table is an immutable view of the picks, read without locks by every
// completion.
type Table struct {
	sessions map[string]entry
	files    map[string]entry
}

// Empty reports whether t holds no picks (a nil Table holds none).
func (t *Table) Empty() bool { return t == nil || len(t.sessions)+len(t.files) == 0 }

// Len is how many keys t holds.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.sessions) + len(t.files)
}

// Score is the recency-weighted count of the picks of key at now; 0 when
// it was never picked.
func (t *Table) Score(k Kind, key string, now time.Time) float64 {
	if t == nil {
		return 0
	}
	e, ok := t.byKind(k)[key]
	if !ok {
		return 0
	}
	return e.decayed(now.UnixMilli())
}

// Count is how many times key was picked (however long ago).
func (t *Table) Count(k Kind, key string) int {
	if t == nil {
		return 0
	}
	return t.byKind(k)[key].count
}

// Picks is the number of picks t counts over all keys.
func (t *Table) Picks() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, m := range []map[string]entry{t.sessions, t.files} {
		for _, e := range m {
			n += e.count
		}
	}
	return n
}

func (t *Table) byKind(k Kind) map[string]entry {
	if k == Session {
		return t.sessions
	}
	return t.files
}

func (t *Table) clone() *Table {
	c := &Table{sessions: make(map[string]entry, len(t.sessions)+1), files: make(map[string]entry, len(t.files)+1)}
	for k, e := range t.sessions {
		c.sessions[k] = e
	}
	for k, e := range t.files {
		c.files[k] = e
	}
	return c
}

func newTable() *Table { return &Table{sessions: map[string]entry{}, files: map[string]entry{}} }

// ValidKey reports whether key can be recorded: at most MaxKeyBytes of
// UTF-8 without control characters (an offered path never holds one).
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyBytes || !utf8.ValidString(key) {
		return false
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// pick is one accepted mention, recorded since the last save.
type pick struct {
	kind Kind
	key  string
	at   int64
}

// Store is the picks of one workspace: the table completion reads, and
// the file they are saved to.
type Store struct {
	path string // "" keeps the picks in memory only
	// workspace is the hex SHA-256 of the workspace root, written in the
	// file so that a file of another workspace is never read as this one's.
	workspace string

	table atomic.Pointer[Table]

	// mu guards pending and serialises Pick, Save and Forget.
	mu sync.Mutex
	// pending are the picks since the last save, which a save adds to the
	// file as it finds it (another server of the same workspace may have
	// saved its own meanwhile).
	pending []pick
}

// DefaultPath is where the picks of the workspace root are kept: the user
// cache dir + dsh-refls/frecency/<first 16 bytes of SHA-256(root), hex>.
func DefaultPath(root string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache dir: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "dsh-refls", "frecency", hex.EncodeToString(sum[:16])+".picks"), nil
}

// Unusable is the error Open returns for a state file it ignored:
// corrupt, truncated, of another format or version, of another workspace,
// too large or unreadable. The Store is empty and usable; its next save
// replaces the file.
type Unusable struct {
	Path   string
	Reason string
}

func (e *Unusable) Error() string {
	return fmt.Sprintf("frecency state %s ignored (%s); it is replaced on the next save", e.Path, e.Reason)
}

// Open returns the store of the workspace root kept at path (no file yet
// is an empty store; path "" keeps it in memory). The store is always
// usable: when the file cannot be used, Open also returns an *Unusable
// error saying why, for one log line.
func Open(path, root string, now time.Time) (*Store, error) {
	sum := sha256.Sum256([]byte(root))
	s := &Store{path: path, workspace: hex.EncodeToString(sum[:])}
	s.table.Store(newTable())
	if path == "" {
		return s, nil
	}
	t, err := s.read(now)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s, nil
		}
		return s, err
	}
	s.table.Store(t)
	return s, nil
}

// Path is where the store is saved, "" when it is not.
func (s *Store) Path() string { return s.path }

// Table is the current view of the picks.
func (s *Store) Table() *Table { return s.table.Load() }

// Pick records one accepted mention of key at now. A key that cannot be
// recorded (ValidKey) is ignored; it reports whether it was recorded.
func (s *Store) Pick(k Kind, key string, now time.Time) bool {
	if (k != Session && k != File) || !ValidKey(key) {
		return false
	}
	ms := now.UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.table.Load().clone()
	m := t.byKind(k)
	m[key] = m[key].add(ms)
	evict(t, ms, 0)
	s.table.Store(t)
	if len(s.pending) < maxPending {
		s.pending = append(s.pending, pick{kind: k, key: key, at: ms})
	}
	return true
}

// Dirty reports whether picks were recorded since the last save.
func (s *Store) Dirty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// Save writes the picks to the store's file: the file as it is now (when
// it is usable: another server of the workspace may have saved since)
// with the picks recorded here since the last save added, entries below
// MinScore dropped. The file is written atomically (a private temporary
// file in the same directory, synced, renamed over it; 0600 in a 0700
// directory). The table becomes what was written.
func (s *Store) Save(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" || len(s.pending) == 0 {
		return nil
	}
	ms := now.UnixMilli()
	t, err := s.read(now)
	if err != nil {
		// No file, or one that cannot be used: what this server holds
		// (the picks it loaded, with its own added) is written.
		t = s.table.Load().clone()
	} else {
		for _, p := range s.pending {
			m := t.byKind(p.kind)
			m[p.key] = m[p.key].add(p.at)
		}
	}
	evict(t, ms, MinScore)
	if err := s.write(t); err != nil {
		return err
	}
	s.pending = s.pending[:0]
	s.table.Store(t)
	return nil
}

// Forget empties the store and removes its file.
func (s *Store) Forget() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = nil
	s.table.Store(newTable())
	if s.path == "" {
		return nil
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing frecency state: %w", err)
	}
	return nil
}

// evict drops the entries of t whose score at now is below floor, then
// the lowest (the oldest on a tie) until MaxEntries remain.
func evict(t *Table, now int64, floor float64) {
	if floor > 0 {
		for _, m := range []map[string]entry{t.sessions, t.files} {
			for k, e := range m {
				if e.decayed(now) < floor {
					delete(m, k)
				}
			}
		}
	}
	over := t.Len() - MaxEntries
	if over <= 0 {
		return
	}
	type ranked struct {
		m     map[string]entry
		key   string
		score float64
		at    int64
	}
	all := make([]ranked, 0, t.Len())
	for _, m := range []map[string]entry{t.sessions, t.files} {
		for k, e := range m {
			all = append(all, ranked{m, k, e.decayed(now), e.at})
		}
	}
	slices.SortFunc(all, func(a, b ranked) int {
		if a.score != b.score {
			if a.score < b.score {
				return -1
			}
			return 1
		}
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return 0
	})
	for _, r := range all[:over] {
		delete(r.m, r.key)
	}
}

// fileEntry is one entry as the file holds it.
type fileEntry struct {
	Kind  string  `json:"kind"`
	Key   string  `json:"key"`
	Score float64 `json:"score"`
	At    int64   `json:"at"`
	Count int     `json:"count"`
}

// fileBody is what follows the magic line.
type fileBody struct {
	Workspace string      `json:"workspace"`
	Picks     []fileEntry `json:"picks"`
}

// read decodes the store's file. fs.ErrNotExist is returned as it is;
// any other failure is an *Unusable.
func (s *Store) read(now time.Time) (*Table, error) {
	f, err := os.Open(s.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &Unusable{Path: s.path, Reason: "unreadable: " + err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &Unusable{Path: s.path, Reason: "unreadable: " + err.Error()}
	}
	t, reason := decode(data, s.workspace, now)
	if reason != "" {
		return nil, &Unusable{Path: s.path, Reason: reason}
	}
	return t, nil
}

// decode parses a state file of workspace; a non-empty reason says why
// it cannot be used.
func decode(data []byte, workspace string, now time.Time) (*Table, string) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Sprintf("larger than %d bytes", MaxFileBytes)
	}
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok || !bytes.HasPrefix(head, []byte(magic)) {
		return nil, "not a frecency state file"
	}
	if v := string(head[len(magic):]); v != fmt.Sprint(formatVersion) {
		return nil, fmt.Sprintf("format version %q, this server reads %d", v, formatVersion)
	}
	var fb fileBody
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fb); err != nil {
		return nil, "corrupt: " + err.Error()
	}
	if dec.More() {
		return nil, "corrupt: data after the picks"
	}
	if fb.Workspace != workspace {
		return nil, "written for another workspace"
	}
	if len(fb.Picks) > MaxEntries {
		return nil, fmt.Sprintf("corrupt: %d entries, more than %d", len(fb.Picks), MaxEntries)
	}
	t := newTable()
	limit := now.Add(24 * time.Hour).UnixMilli()
	for i, p := range fb.Picks {
		k := kindOf(p.Kind)
		switch {
		case k == 0:
			return nil, fmt.Sprintf("corrupt: entry %d has kind %q", i, p.Kind)
		case !ValidKey(p.Key):
			return nil, fmt.Sprintf("corrupt: entry %d has an invalid key", i)
		case !(p.Score > 0 && p.Score <= maxScore) || p.Count < 1 || p.At <= 0 || p.At > limit:
			return nil, fmt.Sprintf("corrupt: entry %d has score %v, count %d, time %d", i, p.Score, p.Count, p.At)
		}
		m := t.byKind(k)
		if _, dup := m[p.Key]; dup {
			return nil, fmt.Sprintf("corrupt: entry %d repeats a key", i)
		}
		m[p.Key] = entry{score: p.Score, at: p.At, count: p.Count}
	}
	return t, ""
}

// encode writes t as a state file of workspace, entries in a fixed order
// (latest pick first, then kind and key) so that equal tables give
// equal files.
func encode(t *Table, workspace string) ([]byte, error) {
	fb := fileBody{Workspace: workspace, Picks: make([]fileEntry, 0, t.Len())}
	for _, k := range []Kind{Session, File} {
		for key, e := range t.byKind(k) {
			fb.Picks = append(fb.Picks, fileEntry{Kind: k.String(), Key: key, Score: e.score, At: e.at, Count: e.count})
		}
	}
	slices.SortFunc(fb.Picks, func(a, b fileEntry) int {
		switch {
		case a.At != b.At:
			if a.At > b.At {
				return -1
			}
			return 1
		case a.Kind != b.Kind:
			if a.Kind < b.Kind {
				return -1
			}
			return 1
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	body, err := json.Marshal(fb)
	if err != nil {
		return nil, err
	}
	out := fmt.Appendf(nil, "%s%d\n", magic, formatVersion)
	out = append(out, body...)
	return append(out, '\n'), nil
}

// tempPattern names the temporary file a save writes before renaming it.
const tempPattern = ".picks-*.tmp"

// write replaces the store's file with t atomically.
func (s *Store) write(t *Table) error {
	data, err := encode(t, s.workspace)
	if err != nil {
		return fmt.Errorf("encoding frecency state: %w", err)
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating frecency state directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPattern) // O_EXCL, mode 0600
	if err != nil {
		return fmt.Errorf("creating frecency state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // nothing to remove after a successful rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing frecency state %s: %w", s.path, err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("replacing frecency state %s: %w", s.path, err)
	}
	return nil
}
