// Package watch reports changes below one directory tree as debounced
// batches of absolute paths.
//
// It watches recursively with fsnotify (inotify on Linux), attaching to a root
// that does not exist yet as soon as it appears, and falls back to polling
// when the kernel's watch limits are exhausted, when the root lives on a
// network filesystem that inotify cannot observe, or when asked to. A
// consumer never loses a change silently: whenever events may have been
// dropped (queue overflow, a vanished root, a switch to polling) the batch
// says so with Rescan and the consumer re-examines the whole root.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Mode selects how a Watcher observes its root. The values are the ones the
// server accepts in its `watch` configuration setting.
type Mode string

const (
	// ModeAuto uses fsnotify and falls back to polling when fsnotify cannot
	// see every change (network filesystem, exhausted inotify limits).
	ModeAuto Mode = "auto"
	// ModeFsnotify uses fsnotify even on a network filesystem; exhausted
	// inotify limits still fall back to polling, because the alternative is
	// losing events.
	ModeFsnotify Mode = "fsnotify"
	// ModePoll stats the whole tree every PollInterval.
	ModePoll Mode = "poll"
	// ModeOff watches nothing; Run only waits for its context.
	ModeOff Mode = "off"
)

// ParseMode returns the Mode named by s; the empty string means ModeAuto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeFsnotify, ModePoll, ModeOff:
		return m, nil
	default:
		return "", fmt.Errorf("unknown watch mode %q (want auto, fsnotify, poll or off)", s)
	}
}

const (
	// DefaultDebounce is the quiet period after the last event before a
	// batch is delivered. 50 ms folds the bursts one save or one append
	// produces (create, write, chmod) into one batch while leaving most of
	// SPEC §5's 250 ms freshness budget to the consumer.
	DefaultDebounce = 50 * time.Millisecond
	// DefaultMaxWait bounds how long a continuous stream of events can
	// postpone delivery: with 200 ms plus the consumer's work a change is
	// still visible within the 250 ms freshness bound of SPEC §5.
	DefaultMaxWait = 200 * time.Millisecond
	// DefaultPollInterval is the pause between two full stat passes in
	// polling mode. Polling is the degraded mode: one pass over a
	// 200,000-file tree costs a few hundred milliseconds of CPU here, so one
	// second keeps that below half a core while changes still show up
	// within about a second.
	DefaultPollInterval = time.Second
	// minPollInterval is the shortest accepted PollInterval; anything
	// shorter would amount to spinning.
	minPollInterval = 10 * time.Millisecond
	// defaultMaxQueuedEvents bounds the events drained from fsnotify and not
	// yet processed. Past it the queue is dropped and the consumer is told
	// to rescan, so a consumer that cannot keep up costs memory only up to
	// this bound (about 64 bytes per event).
	defaultMaxQueuedEvents = 1 << 16
)

// Options configure a Watcher. Root is required; zero durations take the
// package defaults.
type Options struct {
	// Root is the directory to watch. It may not exist yet.
	Root string
	// Mode selects fsnotify, polling or nothing; empty means ModeAuto.
	Mode Mode
	// Debounce is the quiet period after the last event before a batch is
	// delivered (DefaultDebounce when zero).
	Debounce time.Duration
	// MaxWait bounds how long a continuous stream of events may postpone a
	// batch (DefaultMaxWait when zero). It must not be below Debounce.
	MaxWait time.Duration
	// PollInterval is the pause between two stat passes in polling mode
	// (DefaultPollInterval when zero).
	PollInterval time.Duration
	// Skip reports whether a path below Root, given slash-separated and
	// relative to Root, is ignored; a skipped directory is neither watched
	// nor descended into. Nil skips nothing.
	Skip func(rel string, isDir bool) bool
	// MaxDepth, when positive, is the depth of the deepest directories
	// watched in fsnotify mode (Root's children are at depth 1). Those are
	// watched but not listed: their entries' changes arrive as events on
	// them, and a directory at that depth that appears is reported itself,
	// not its entries. Deeper directories are ignored. The sessions store
	// (<root>/<project>/<session>/<log>) is watched with MaxDepth 2, so a
	// restart does not list 100,000 session directories twice.
	MaxDepth int
	// Yield, when set, is called before each directory the fsnotify
	// engine attaches a watch to, and may wait: over a large tree the
	// attach takes seconds of CPU, which a server lets its answers go
	// first in.
	Yield func(ctx context.Context)
	// Logger receives diagnostics; nil discards them.
	Logger *zap.Logger
	// OnDegraded is called once, from the goroutine running Run, when the
	// watcher falls back to polling. Nil is allowed.
	OnDegraded func(reason string)

	// addWatchHook, when set, runs before every fsnotify watch is added and
	// can fail it; tests use it to simulate exhausted inotify limits.
	addWatchHook func(dir string) error
	// networkFS, when set, replaces the statfs check for a network
	// filesystem; tests use it to simulate an NFS root.
	networkFS func(path string) (fsName string, remote bool)
	// maxQueuedEvents, when positive, replaces defaultMaxQueuedEvents.
	maxQueuedEvents int
	// queueOverflowHook, when set, runs each time the event queue passes
	// its bound and drops what it held; tests wait for it.
	queueOverflowHook func()
	// pollReadDir, when set, replaces the directory listing of a poll pass;
	// tests use it to simulate unreadable directories.
	pollReadDir func(dir string) ([]fs.DirEntry, error)
}

// Batch is one delivery of changes.
type Batch struct {
	// Paths are the absolute paths that were created, written, removed or
	// renamed (both names), de-duplicated and sorted. A path may no longer
	// exist when the batch arrives; consumers re-examine each one.
	Paths []string
	// Rescan means changes may have been missed (event queue overflow, the
	// root vanished, a switch to polling): the consumer must rescan Root.
	Rescan bool
}

// Status describes what a Watcher is doing right now.
type Status struct {
	// Root is the absolute root being watched.
	Root string
	// Mode is the effective mode: ModeFsnotify, ModePoll or ModeOff; it is
	// ModeAuto only before Run starts.
	Mode Mode
	// Degraded is why the watcher fell back to polling, or empty.
	Degraded string
	// Waiting is true while Root does not exist.
	Waiting bool
	// WatchedDirs is the number of directories under watch: inotify watches
	// held in fsnotify mode, directories stat'ed per pass in polling mode.
	WatchedDirs int
	// LastEvent is when a change was last observed (zero if never).
	LastEvent time.Time
}

// Watcher watches one root. Create it with New and start it with Run.
type Watcher struct {
	opts  Options
	root  string
	log   *zap.Logger
	skip  func(rel string, isDir bool) bool
	ready chan struct{}

	// readyOnce closes ready when the first watch or poll pass is set up.
	readyOnce sync.Once
	// started rejects a second call to Run.
	started atomic.Bool

	// statusMu guards status, which Status reads from other goroutines.
	statusMu sync.Mutex
	status   Status
}

// New validates opts and returns a Watcher that is not running yet.
func New(opts Options) (*Watcher, error) {
	if opts.Root == "" {
		return nil, errors.New("watch: Root is required")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("watch: resolving root %s: %w", opts.Root, err)
	}
	if opts.Mode, err = ParseMode(string(opts.Mode)); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if opts.Debounce < 0 || opts.MaxWait < 0 || opts.PollInterval < 0 {
		return nil, errors.New("watch: durations must not be negative")
	}
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = max(DefaultMaxWait, opts.Debounce)
	}
	if opts.MaxWait < opts.Debounce {
		return nil, fmt.Errorf("watch: MaxWait %v is shorter than Debounce %v", opts.MaxWait, opts.Debounce)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.PollInterval < minPollInterval {
		return nil, fmt.Errorf("watch: PollInterval %v is below the minimum %v", opts.PollInterval, minPollInterval)
	}
	if opts.maxQueuedEvents <= 0 {
		opts.maxQueuedEvents = defaultMaxQueuedEvents
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	skip := opts.Skip
	if skip == nil {
		skip = func(string, bool) bool { return false }
	}
	w := &Watcher{
		opts:  opts,
		root:  root,
		log:   log.With(zap.String("root", root)),
		skip:  skip,
		ready: make(chan struct{}),
	}
	w.status = Status{Root: root, Mode: opts.Mode}
	return w, nil
}

// Ready is closed once Run has set up its first watches (or taken its first
// polling snapshot, or found Root missing and begun waiting for it). Changes
// made after Ready are reported; a consumer can scan Root after Ready
// without missing anything in between.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Status returns a snapshot of the watcher's state; safe for concurrent use.
func (w *Watcher) Status() Status {
	w.statusMu.Lock()
	defer w.statusMu.Unlock()
	return w.status
}

// Run watches until ctx is done, calling deliver with each batch from a
// single goroutine (never concurrently). While deliver runs, new changes
// accumulate into the next batch. Run owns all its goroutines and returns
// only after they have stopped; it returns nil after ctx is done and an
// error only when called twice or without deliver.
func (w *Watcher) Run(ctx context.Context, deliver func(Batch)) error {
	if deliver == nil {
		return errors.New("watch: Run needs a deliver function")
	}
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice")
	}
	b := newBatcher(w.opts.Debounce, w.opts.MaxWait)
	var wg sync.WaitGroup
	wg.Go(func() { b.deliverLoop(deliver) })
	defer func() {
		b.close()
		wg.Wait()
	}()

	switch w.opts.Mode {
	case ModeOff:
		w.setStatus(func(s *Status) { s.Mode = ModeOff })
		w.markReady()
		<-ctx.Done()
		return nil
	case ModePoll:
		w.runPoll(ctx, b)
		return nil
	}
	var degraded *degradeError
	if err := w.runNotify(ctx, b); errors.As(err, &degraded) {
		w.degrade(degraded.reason)
		b.markRescan()
		w.runPoll(ctx, b)
	}
	return nil
}

// degradeError makes the fsnotify engine hand over to polling.
type degradeError struct{ reason string }

func (e *degradeError) Error() string { return e.reason }

// degrade records the fallback to polling and reports it once.
func (w *Watcher) degrade(reason string) {
	w.log.Warn("falling back to polling", zap.String("reason", reason),
		zap.Duration("interval", w.opts.PollInterval))
	w.setStatus(func(s *Status) {
		s.Degraded = reason
		s.Mode = ModePoll
	})
	if w.opts.OnDegraded != nil {
		w.opts.OnDegraded(reason)
	}
}

func (w *Watcher) markReady() { w.readyOnce.Do(func() { close(w.ready) }) }

func (w *Watcher) setStatus(f func(*Status)) {
	w.statusMu.Lock()
	defer w.statusMu.Unlock()
	f(&w.status)
}

// rel returns path relative to the root, slash-separated, and whether path
// lies strictly below the root.
func (w *Watcher) rel(path string) (string, bool) {
	r, err := filepath.Rel(w.root, path)
	if err != nil || r == "." || r == ".." || len(r) > 2 && r[:3] == ".."+string(filepath.Separator) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// depth is how many levels below the root path lies (0: the root or a
// path outside it).
func (w *Watcher) depth(path string) int {
	r, ok := w.rel(path)
	if !ok {
		return 0
	}
	return strings.Count(r, "/") + 1
}

// skipped reports whether path (strictly below the root) is ignored.
func (w *Watcher) skipped(path string, isDir bool) bool {
	if w.opts.Skip == nil {
		return false // nothing is skipped: no relative path to compute
	}
	r, ok := w.rel(path)
	if !ok {
		return false
	}
	return w.skip(r, isDir)
}
