package titles

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// workersPerCPU sets the default number of log readers per core. Most of a
// build, and nearly all of a restart, is spent in stat and read system
// calls, which overlap beyond the core count: on the 2-core CI machine a
// restart over 10,000 sessions took 89 ms with 2 workers and 73 ms with 8.
const workersPerCPU = 4

// IndexOptions configure a title index.
type IndexOptions struct {
	// Logger receives skip reasons and read failures; nil logs nothing.
	Logger *zap.Logger
	// Parallelism bounds how many logs are read at once; 0 means
	// workersPerCPU × GOMAXPROCS.
	Parallelism int
	// Yield, when set, is called before each session directory is handed
	// to a reader, and may wait: a server holds it while it answers.
	Yield func(ctx context.Context)
}

// Index is the session title index of §1.5. It has one writer at a time
// (Build and Refresh serialise on writeMu) and any number of readers, which
// take immutable snapshots.
type Index struct {
	root   string
	opts   IndexOptions
	log    *zap.Logger
	frames dshlog.FrameDecoder

	// writeMu serialises Build and Refresh; it guards tracked and skipped.
	writeMu sync.Mutex
	tracked map[string]*tracked       // by session directory path
	skipped map[string]dshlog.Skipped // by path

	snap atomic.Pointer[Snapshot]
	// dirty reports that tracked or skipped changed since the last publish;
	// a build that changed nothing republishes the last snapshot's data.
	dirty bool
	// changes counts the publishes that followed a change; saved is the
	// cache file that holds the state as of changes == savedAt (read by
	// LoadCache or written by SaveCache), so saving it again is skipped.
	changes, savedAt uint64
	saved            string
	// cols holds the search texts that tracked sessions' col point into:
	// the last published snapshot's, or those LoadCache decoded.
	cols searchColumns
	// names interns the cwds and origins that the logs being read name:
	// a project's sessions share one cwd string.
	names interner
	// scratch lends query buffers to every snapshot.
	scratch   sync.Pool
	bytesRead atomic.Int64
	logsRead  atomic.Int64
}

// tracked is the writer's state for one session directory. There is one
// per session (100,000 on a large store), so it holds no per-read state
// (the title scanner lives for one read) and no bytes of the log: the
// check that a log only grew keeps the SHA-256 of the bytes before the
// resume offset, not the bytes.
type tracked struct {
	dir dshlog.SessionDir
	// entry is never nil. While shared, it is the published snapshot's
	// copy (one Entry per session, not two), and the writer copies it
	// before changing anything (own).
	entry *dshlog.Entry
	file  dshlog.FileIdentity
	// why holds the reasons a session is known but not listed; nil, as
	// for nearly every session, when there is none.
	why *skipReasons
	// fresh is the search text when it is not in Index.cols and was
	// built already: the snapshot lists the session under its parent's
	// catalog label, or LoadCache could not use the cached text. A
	// session read since the last publish has neither (col 0, fresh nil):
	// publish builds its text straight into the new columns, so a build
	// does not hold a second copy of every text until it publishes.
	fresh *searchText
	// tailSum and tailLen are the SHA-256 and length (at most
	// dshlog.ResumeTailLen) of the bytes before entry.Offset, to tell growth from
	// a rewrite in place.
	tailSum [sha256.Size]byte
	// col is 1 + the index of the entry's search text in Index.cols, 0
	// when it is not there. A listed session keeps its search text once,
	// in the published columns, not a second time here.
	col     int32
	tailLen uint8
	shared  bool
	// started reports that the header has been read.
	started bool
}

// skipReasons are the reasons of a tracked session that is not listed.
type skipReasons struct {
	// skip is set when the session is known but must not be listed.
	skip string
	// identityErr says why the header does not belong where the log lies.
	identityErr string
}

// skipReason is why the session is not listed; "" when it is.
func (t *tracked) skipReason() string {
	if t.why == nil {
		return ""
	}
	return t.why.skip
}

// identityErr says why the header does not belong where the log lies.
func (t *tracked) identityErr() string {
	if t.why == nil {
		return ""
	}
	return t.why.identityErr
}

// setSkip sets skipReason; setIdentityErr sets identityErr.
func (t *tracked) setSkip(reason string) { t.setReasons(reason, t.identityErr()) }

func (t *tracked) setIdentityErr(reason string) { t.setReasons(t.skipReason(), reason) }

func (t *tracked) setReasons(skip, identityErr string) {
	switch {
	case skip == "" && identityErr == "":
		t.why = nil
	case t.why != nil && t.why.skip == skip && t.why.identityErr == identityErr:
	default:
		t.why = &skipReasons{skip: skip, identityErr: identityErr}
	}
}

// newTracked returns the state of a session not read yet.
func newTracked(d dshlog.SessionDir) *tracked {
	return &tracked{dir: d, entry: &dshlog.Entry{}}
}

// own gives the writer its own copy of a shared entry, to change.
func (t *tracked) own() {
	if t.shared {
		e := *t.entry
		t.entry, t.shared = &e, false
	}
}

// interner hands out one string per distinct value to the workers of an
// update; reset empties it, so it holds no more than one update's values.
type interner struct {
	mu   sync.Mutex
	seen map[string]string
}

// intern returns s, or the equal string it returned before.
func (in *interner) intern(s string) string {
	if s == "" {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.seen[s]; ok {
		return v
	}
	if in.seen == nil {
		in.seen = map[string]string{}
	}
	in.seen[s] = s
	return s
}

// reset forgets every value.
func (in *interner) reset() {
	in.mu.Lock()
	in.seen = nil
	in.mu.Unlock()
}

// NewIndex returns an empty index over root; call Build to fill it.
func NewIndex(root string, opts IndexOptions) *Index {
	if opts.Parallelism <= 0 {
		opts.Parallelism = workersPerCPU * runtime.GOMAXPROCS(0)
	}
	lg := opts.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	ix := &Index{root: root, opts: opts, log: lg, tracked: map[string]*tracked{}, skipped: map[string]dshlog.Skipped{}, dirty: true}
	ix.frames.Concurrency = min(opts.Parallelism, runtime.GOMAXPROCS(0)) // decoding is CPU-bound
	ix.snap.Store(&Snapshot{Root: root, Building: true, byID: map[string]int{}})
	return ix
}

// Root returns the sessions root the index reads.
func (ix *Index) Root() string { return ix.root }

// Snapshot returns the current immutable view of the index.
func (ix *Index) Snapshot() *Snapshot { return ix.snap.Load() }

// BytesRead returns how many log bytes the index has read from disk so far.
func (ix *Index) BytesRead() int64 { return ix.bytesRead.Load() }

// LogsRead returns how many log reads (whole or incremental) the index has made.
func (ix *Index) LogsRead() int64 { return ix.logsRead.Load() }

// Build scans the whole root: new sessions are read, grown logs are read
// from where the last read stopped, replaced logs are reread and vanished
// sessions are dropped. progress, when not nil, is called as logs are done.
func (ix *Index) Build(ctx context.Context, progress func(done, total int)) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.buildLocked(ctx, progress)
}

func (ix *Index) buildLocked(ctx context.Context, progress func(done, total int)) error {
	refs, skipped, err := dshlog.Discover(ix.root)
	if err != nil {
		ix.publishLocked(false)
		return err
	}
	if len(refs) != len(ix.tracked) {
		ix.pruneUnseenLocked(refs)
	} else {
		// As many directories as tracked sessions: they are the same ones
		// when each is tracked, which the update looks up anyway.
		for _, r := range refs {
			if ix.tracked[r.Path] == nil {
				ix.pruneUnseenLocked(refs)
				break
			}
		}
	}
	fresh := make(map[string]dshlog.Skipped, len(skipped))
	for _, s := range skipped {
		fresh[s.Path] = s
	}
	if !maps.Equal(ix.skipped, fresh) {
		ix.dirty = true
	}
	ix.skipped = fresh
	err = ix.updateLocked(ctx, refs, progress)
	ix.publishLocked(false)
	return err
}

// pruneUnseenLocked drops the tracked sessions whose directories are not
// among refs.
func (ix *Index) pruneUnseenLocked(refs []dshlog.DirRef) {
	seen := make(map[string]bool, len(refs))
	for _, r := range refs {
		seen[r.Path] = true
	}
	for path := range ix.tracked {
		if !seen[path] {
			delete(ix.tracked, path)
			ix.dirty = true
		}
	}
}

// Refresh re-examines the given paths, as a watcher reports them: a path in
// a session directory updates that session, reading only what its log
// appended; a project directory or the root is listed again.
func (ix *Index) Refresh(ctx context.Context, paths []string) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.dirty = true // a refresh follows a reported change
	sessions := map[dshlog.DirRef]bool{}
	projects := map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(ix.root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if rel == "." {
			return ix.buildLocked(ctx, nil)
		}
		parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
		if !dshlog.IsProjectDirName(parts[0]) {
			continue
		}
		if len(parts) == 1 {
			projects[parts[0]] = true
			continue
		}
		pPath := filepath.Join(ix.root, parts[0])
		sessions[dshlog.DirRef{ProjectName: parts[0], DirName: parts[1], Path: filepath.Join(pPath, parts[1])}] = true
	}
	var refs []dshlog.DirRef
	for project := range projects {
		pPath := filepath.Join(ix.root, project)
		ix.forgetProjectLocked(pPath)
		if info, err := os.Stat(pPath); err != nil || !info.IsDir() {
			continue
		}
		found, skipped := dshlog.DiscoverProject(pPath, project)
		for _, s := range skipped {
			ix.skipped[s.Path] = s
		}
		refs = append(refs, found...)
	}
	for ref := range sessions {
		if projects[ref.ProjectName] {
			continue // already listed with its project
		}
		if _, err := os.Lstat(ref.Path); err != nil {
			delete(ix.tracked, ref.Path)
			delete(ix.skipped, ref.Path)
			continue
		}
		refs = append(refs, ref)
	}
	err := ix.updateLocked(ctx, refs, nil)
	ix.publishLocked(false)
	return err
}

// forgetProjectLocked drops the skip reasons of a project directory and the
// sessions whose directories vanished; listing the project again restores
// the rest, whose read state is kept so only growth is read.
func (ix *Index) forgetProjectLocked(pPath string) {
	prefix := pPath + string(filepath.Separator)
	for path := range ix.skipped {
		if strings.HasPrefix(path, prefix) {
			delete(ix.skipped, path)
		}
	}
	for path := range ix.tracked {
		if strings.HasPrefix(path, prefix) {
			if _, err := os.Lstat(path); err != nil {
				delete(ix.tracked, path)
			}
		}
	}
}

// updateResult is what a worker found for one session directory.
type updateResult struct {
	t    *tracked
	skip *dshlog.Skipped
	// same reports that nothing changed: the same directory, log and file.
	same bool
}

// updateLocked brings the given session directories up to date, in
// parallel: each worker chooses the log of a directory and reads what is
// new in it. Workers touch only their own tracked value; the maps are
// updated here, after they finish.
func (ix *Index) updateLocked(ctx context.Context, refs []dshlog.DirRef, progress func(done, total int)) error {
	prior := make([]*tracked, len(refs))
	for i, r := range refs {
		prior[i] = ix.tracked[r.Path]
	}
	results := make([]updateResult, len(refs))
	defer ix.names.reset()
	next := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	var progressMu sync.Mutex
	for w := 0; w < min(ix.opts.Parallelism, max(1, len(refs))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = ix.updateOne(refs[i], prior[i])
				if progress != nil {
					n := int(done.Add(1))
					progressMu.Lock()
					progress(n, len(refs))
					progressMu.Unlock()
				}
			}
		}()
	}
	var err error
	sent := 0
	for i := range refs {
		if ix.opts.Yield != nil {
			ix.opts.Yield(ctx)
		}
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
		sent++
	}
	close(next)
	wg.Wait()
	for i := 0; i < sent; i++ {
		r := results[i]
		if r.same && r.t == prior[i] {
			continue // tracked as it is, and not skipped
		}
		ix.dirty = true
		path := refs[i].Path
		delete(ix.skipped, path)
		if r.t == nil {
			delete(ix.tracked, path)
			if r.skip != nil {
				ix.skipped[path] = *r.skip
			}
			continue
		}
		ix.tracked[r.t.dir.Path()] = r.t // the key shares the tracked path's bytes
	}
	if err != nil {
		return fmt.Errorf("indexing %s: %w", ix.root, err)
	}
	return nil
}

// updateOne chooses the log of one session directory and reads what is new.
func (ix *Index) updateOne(ref dshlog.DirRef, prior *tracked) updateResult {
	var priorDir *dshlog.SessionDir
	if prior != nil {
		priorDir = &prior.dir
	}
	d, skip := dshlog.ChooseSessionLog(ref, priorDir)
	if skip != nil {
		return updateResult{skip: skip}
	}
	t := prior
	if t == nil || t.dir.Log.Path != d.Log.Path {
		t = newTracked(d)
	}
	sameDir := t == prior && t.dir == d
	t.dir = d
	skipBefore := t.skipReason()
	read := ix.readTracked(t)
	return updateResult{t: t, same: sameDir && !read && t.skipReason() == skipBefore}
}

// readTracked reads what is new in one log. It reports false when the log
// is unchanged since the last read and nothing was done.
func (ix *Index) readTracked(t *tracked) bool {
	id, err := dshlog.StatIdentity(t.dir.Log.Path)
	if err != nil {
		t.setSkip(fmt.Sprintf("log unreadable: %v", err))
		return true
	}
	if t.started && (id.Inode != t.file.Inode || id.Device != t.file.Device || id.Size < t.entry.Offset) {
		// Replaced or truncated: read it again from the start.
		*t = *newTracked(t.dir)
	}
	if t.file != (dshlog.FileIdentity{}) && id == t.file {
		return false // unchanged since the last read
	}
	t.own()
	if !t.started {
		t.entry = &dshlog.Entry{Path: t.dir.Log.Path, Encoding: t.dir.Log.Encoding, Generation: t.dir.Log.Generation, LastSeq: -1}
		t.setIdentityErr("")
	}
	sc := dshlog.TitleScanner{Entry: t.entry}
	r := dshlog.LineReader{Path: t.dir.Log.Path, Encoding: t.dir.Log.Encoding, Frames: &ix.frames, SkipCorruptFrames: true,
		OnTorn: func() { sc.Torn = true },
		OnOverlong: func(n int64) error {
			ix.log.Info("over-long log line skipped", zap.String("path", t.dir.Log.Path), zap.Int64("bytes", n), zap.Int64("cap", dshlog.MaxLineBytes))
			return nil
		}}
	var headerErr error
	scan := func(line []byte) error {
		if t.started {
			sc.Line(line)
			return nil
		}
		h, herr := dshlog.ParseHeader(line)
		if herr != nil {
			headerErr = herr
			return herr
		}
		t.started = true
		if name := t.dir.DirName(); h.ID == name {
			h.ID = name // shares the log path's bytes
		}
		h.Cwd, h.Origin = ix.names.intern(h.Cwd), ix.names.intern(h.Origin)
		t.entry.ID, t.entry.Cwd, t.entry.HasCwd = h.ID, h.Cwd, h.HasCwd
		t.entry.CreatedAt, t.entry.ParentSession, t.entry.Origin = h.CreatedAt, h.ParentSession, h.Origin
		t.entry.FormatVersion, t.entry.DelegationDepth, t.entry.Seeded = h.Version, h.DelegationDepth, h.Seeded
		if ierr := dshlog.CheckIdentity(t.dir, h); ierr != nil {
			t.setIdentityErr(ierr.Error())
		}
		return nil
	}
	var res dshlog.ReadResult
	res, err = r.ReadResumed(t.entry.Offset, int(t.tailLen), &t.tailSum, scan)
	if errors.Is(err, dshlog.ErrRewritten) {
		ix.log.Info("log rewritten in place; reading it again", zap.String("path", t.dir.Log.Path))
		*t = tracked{dir: t.dir}
		t.entry = &dshlog.Entry{Path: t.dir.Log.Path, Encoding: t.dir.Log.Encoding, Generation: t.dir.Log.Generation, LastSeq: -1}
		sc = dshlog.TitleScanner{Entry: t.entry}
		res, err = r.Read(0, nil, scan)
	}
	sc.Finish(res.LastLine)
	t.entry.Title, t.entry.DescriptorLabel = dshlog.CapLabel(t.entry.Title), dshlog.CapLabel(t.entry.DescriptorLabel)
	t.tailLen, t.tailSum = uint8(len(res.Tail)), sha256.Sum256(res.Tail)
	ix.bytesRead.Add(res.BytesRead)
	ix.logsRead.Add(1)
	t.entry.Offset = res.Offset
	t.file = id
	t.setSkip(t.identityErr())
	var corrupt *dshlog.CorruptError
	switch {
	case headerErr != nil:
		t.setSkip("header unreadable: " + headerReason(headerErr))
		t.entry.Offset = 0
	case errors.As(err, &corrupt):
		t.entry.Corrupt = corrupt.Reason
	case err != nil:
		t.setSkip(err.Error())
		t.file = dshlog.FileIdentity{} // read again next time
	case !t.started:
		t.setSkip("log has no complete header line yet")
	}
	t.col, t.fresh = 0, nil // publish builds the search text
	return true
}

// headerReason describes why a header line was refused without quoting the
// line: a skip reason is logged and answered to clients, and the file may
// not be what it is named (a log is never followed through a link, but a
// reason must not become a way to read a byte of any file).
func headerReason(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf("header is not a JSON object (invalid JSON at byte %d)", syntax.Offset)
	}
	return err.Error()
}
