// Package live keeps a session title index fresh: it restores the index from
// its cache, builds it, and then applies what a watcher reports, reading only
// what each log appended. It is the one place where the sessionref index and
// the watch package meet.
package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

// cacheSaveInterval bounds how often the cache is rewritten while logs
// change: often enough that a restart rarely rereads much, rarely enough
// that a busy store does not turn into constant cache writes.
const cacheSaveInterval = 5 * time.Second

// Options configure a Store.
type Options struct {
	// Root is the sessions root; it may not exist yet.
	Root string
	// Watch selects how changes are observed (watch.ModeAuto when empty).
	Watch watch.Mode
	// CachePath is the index cache file; "" means the default location
	// under the user cache dir, and NoCache disables caching.
	CachePath string
	// Logger receives diagnostics; nil discards them.
	Logger *zap.Logger
	// OnDegraded is called once when watching falls back to polling.
	OnDegraded func(reason string)
	// Progress is called while the first build reads logs.
	Progress func(done, total int)
	// OnUpdate is called after the first build and after each batch of
	// changes is applied, from the goroutine running Run, so that users of
	// the index (diagnostics, caches) can refresh. It must not block long:
	// the next batch waits for it.
	OnUpdate func()
	// DuringRestore, when set, is called as the cache restore begins, and
	// the func it returns as the restore ends: the server turns the
	// garbage collector off for it, since the restored index is live heap
	// that every collection would only mark.
	DuringRestore func() (done func())
	// Yield, when set, is called before each directory the watcher
	// attaches to and each log the index reads, and may wait: the server
	// holds them while it answers.
	Yield func(ctx context.Context)
	// PollInterval, Debounce and MaxWait tune the watcher (zero: its defaults).
	PollInterval, Debounce, MaxWait time.Duration

	// watchSkip, when set, is the watcher's Skip; tests use it to hold the
	// watcher while it attaches.
	watchSkip func(rel string, isDir bool) bool
}

// sessionDirDepth is the depth of session directories below the root
// (<root>/<project>/<session>/<log>): they are watched, their logs'
// changes arrive as events on them, and they are not listed when the
// watcher attaches, which at 100,000 sessions halves the attach.
const sessionDirDepth = 2

// NoCache as Options.CachePath disables the index cache.
const NoCache = "-"

// Store owns a title index and the watcher that keeps it fresh.
type Store struct {
	opts    Options
	log     *zap.Logger
	index   *titles.Index
	watcher *watch.Watcher
	ready   chan struct{}
	// restored is closed once the stored index is published: it held
	// every session as the last save saw them.
	restored chan struct{}

	// statusMu guards the fields below it.
	statusMu    sync.Mutex
	cachePath   string
	cacheLoaded bool
	cacheErr    string
	buildTime   time.Duration
	lastRefresh time.Time
	refreshErr  string
}

// Status describes the store for dsh/status and `dsh-refls index`.
type Status struct {
	Root         string        `json:"root"`
	Sessions     int           `json:"sessionsIndexed"`
	Skipped      int           `json:"sessionsSkipped"`
	Building     bool          `json:"building"`
	WatchMode    watch.Mode    `json:"watchMode"`
	Degraded     string        `json:"degraded,omitempty"`
	WatchedDirs  int           `json:"watchedDirectories"`
	CachePath    string        `json:"cachePath,omitempty"`
	CacheLoaded  bool          `json:"cacheLoaded"`
	CacheProblem string        `json:"cacheProblem,omitempty"`
	BuildTime    time.Duration `json:"buildTimeNanos"`
	BytesRead    int64         `json:"bytesRead"`
	LastUpdate   time.Time     `json:"lastUpdate"`
	RefreshError string        `json:"refreshError,omitempty"`
}

// Open prepares a Store; Run starts it.
func Open(opts Options) (*Store, error) {
	lg := opts.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	w, err := watch.New(watch.Options{Root: opts.Root, Mode: opts.Watch, Logger: lg,
		OnDegraded: opts.OnDegraded, PollInterval: opts.PollInterval, Debounce: opts.Debounce, MaxWait: opts.MaxWait,
		Skip: opts.watchSkip, MaxDepth: sessionDirDepth, Yield: opts.Yield})
	if err != nil {
		return nil, fmt.Errorf("watching sessions root %s: %w", opts.Root, err)
	}
	s := &Store{opts: opts, log: lg, watcher: w, ready: make(chan struct{}), restored: make(chan struct{}),
		index: titles.NewIndex(opts.Root, titles.IndexOptions{Logger: lg, Yield: opts.Yield})}
	switch opts.CachePath {
	case NoCache:
	case "":
		if path, err := titles.DefaultCachePath(opts.Root); err == nil {
			s.cachePath = path
		} else {
			s.cacheErr = err.Error()
		}
	default:
		s.cachePath = opts.CachePath
	}
	return s, nil
}

// Index returns the index; its snapshots are safe to use at any time.
func (s *Store) Index() *titles.Index { return s.index }

// Ready is closed when the first build has finished.
func (s *Store) Ready() <-chan struct{} { return s.ready }

// Restored is closed once the stored index has been restored: from then
// on the snapshot lists every session the last save knew (a clean
// shutdown saves what changed), until the first build has checked each
// log. It is never closed when there was no usable stored index.
func (s *Store) Restored() <-chan struct{} { return s.restored }

// Run restores the cache (its snapshot is served at once), then attaches
// the watcher, builds the index once it is attached, and keeps it fresh
// until ctx is done; then it saves the cache and returns.
func (s *Store) Run(ctx context.Context) error {
	// The cache is restored before the watcher attaches: over a large
	// store the attach takes seconds of CPU (a directory read and an
	// inotify watch per directory), and the restored snapshot is what
	// answers until the build below has checked it against the logs.
	start := time.Now()
	s.loadCache()
	batches := make(chan watch.Batch, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// deliver may block while a batch is applied: the watcher folds
		// what happens meanwhile into its next batch, so nothing is lost.
		err := s.watcher.Run(ctx, func(b watch.Batch) {
			select {
			case batches <- b:
			case <-ctx.Done():
			}
		})
		if err != nil {
			s.log.Error("session watcher stopped", zap.Error(err))
		}
	}()
	defer wg.Wait()
	// Watch first, then build: a change made during the attach or the
	// build is seen by the build or arrives as a batch afterwards instead
	// of being missed.
	select {
	case <-s.watcher.Ready():
	case <-ctx.Done():
		close(s.ready)
		return nil
	}
	s.build(ctx, start)
	close(s.ready)
	s.updated()
	dirty := false
	save := time.NewTicker(cacheSaveInterval)
	defer save.Stop()
	for {
		select {
		case <-ctx.Done():
			if dirty {
				s.saveCache()
			}
			return nil
		case b := <-batches:
			s.apply(ctx, b)
			dirty = true
			s.updated()
		case <-save.C:
			if dirty {
				s.saveCache()
				dirty = false
			}
		}
	}
}

// loadCache restores the index from its cache, when there is one.
func (s *Store) loadCache() {
	if s.cachePath == "" {
		return
	}
	if s.opts.DuringRestore != nil {
		defer s.opts.DuringRestore()()
	}
	err := s.index.LoadCache(s.cachePath)
	if err == nil {
		close(s.restored)
	}
	s.statusMu.Lock()
	s.cacheLoaded = err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.cacheErr = err.Error()
		s.log.Warn("index cache discarded; rebuilding from the logs", zap.Error(err))
	}
	s.statusMu.Unlock()
}

// build scans the root, which the restored cache, if any, makes cheap;
// start is when the restore began.
func (s *Store) build(ctx context.Context, start time.Time) {
	err := s.index.Build(ctx, s.opts.Progress)
	s.statusMu.Lock()
	s.buildTime = time.Since(start)
	s.lastRefresh = time.Now()
	if err != nil {
		s.refreshErr = err.Error()
	}
	s.statusMu.Unlock()
	if err != nil {
		s.log.Warn("building the session index", zap.Error(err))
		return
	}
	s.saveCache()
}

// apply brings the index up to date with one batch.
func (s *Store) apply(ctx context.Context, b watch.Batch) {
	var err error
	if b.Rescan {
		err = s.index.Build(ctx, nil)
	} else {
		err = s.index.Refresh(ctx, b.Paths)
	}
	s.statusMu.Lock()
	s.lastRefresh = time.Now()
	s.refreshErr = ""
	if err != nil && ctx.Err() == nil {
		s.refreshErr = err.Error()
	}
	s.statusMu.Unlock()
	if err != nil && ctx.Err() == nil {
		s.log.Warn("refreshing the session index", zap.Error(err))
	}
}

// updated calls OnUpdate, if set.
func (s *Store) updated() {
	if s.opts.OnUpdate != nil {
		s.opts.OnUpdate()
	}
}

func (s *Store) saveCache() {
	if s.cachePath == "" {
		return
	}
	if err := s.index.SaveCache(s.cachePath); err != nil {
		s.log.Warn("saving the index cache", zap.Error(err))
		s.statusMu.Lock()
		s.cacheErr = err.Error()
		s.statusMu.Unlock()
	}
}

// Status reports the store's state.
func (s *Store) Status() Status {
	snap := s.index.Snapshot()
	ws := s.watcher.Status()
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	return Status{
		Root: s.opts.Root, Sessions: len(snap.Sessions), Skipped: len(snap.Skipped), Building: snap.Building,
		WatchMode: ws.Mode, Degraded: ws.Degraded, WatchedDirs: ws.WatchedDirs,
		CachePath: s.cachePath, CacheLoaded: s.cacheLoaded, CacheProblem: s.cacheErr,
		BuildTime: s.buildTime, BytesRead: s.index.BytesRead(), LastUpdate: s.lastRefresh, RefreshError: s.refreshErr,
	}
}
