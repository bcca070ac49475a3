package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// maxSettleSteps bounds how often one call to settle re-examines the path
// to a missing root; each step descends one level, so this is a depth
// limit, and whatever appears later triggers another settle.
const maxSettleSteps = 256

// notifier is the fsnotify engine. All fields belong to the goroutine
// running runNotify, except what eventQueue guards itself.
type notifier struct {
	// ctx is runNotify's: Options.Yield is given it.
	ctx context.Context
	w   *Watcher
	fw  *fsnotify.Watcher
	q   *eventQueue
	b   *batcher

	dirs *dirSet
	// attached is true while the root exists and is watched recursively.
	attached bool
	// anchor is the nearest existing ancestor watched while the root is
	// missing, or empty.
	anchor string
	// rootWasMissing makes the next attach report the root's contents as
	// created, since the consumer saw an empty root.
	rootWasMissing bool
}

// runNotify watches with fsnotify until ctx is done (nil) or fsnotify
// cannot go on (*degradeError).
func (w *Watcher) runNotify(ctx context.Context, b *batcher) error {
	if w.opts.Mode == ModeAuto {
		if err := w.checkNetworkFS(w.root); err != nil {
			return err
		}
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		if reason, ok := watchLimitReason(err); ok {
			return &degradeError{reason: fmt.Sprintf("starting fsnotify: %s", reason)}
		}
		return &degradeError{reason: fmt.Sprintf("starting fsnotify: %v", err)}
	}
	n := &notifier{
		ctx:  ctx,
		w:    w,
		fw:   fw,
		q:    newEventQueue(w.opts.maxQueuedEvents, w.opts.queueOverflowHook),
		b:    b,
		dirs: newDirSet(),
	}
	var wg sync.WaitGroup
	wg.Go(func() { n.q.drain(fw, w.log) })
	defer func() {
		if err := fw.Close(); err != nil {
			w.log.Warn("closing fsnotify", zap.Error(err))
		}
		wg.Wait()
	}()
	w.setStatus(func(s *Status) { s.Mode = ModeFsnotify })

	if err := n.settle(); err != nil {
		return err
	}
	w.markReady()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.q.signal:
			if err := n.process(); err != nil {
				return err
			}
		case <-b.timerC():
			b.onTimer()
		case <-b.deliveredC():
			b.onDelivered()
		}
	}
}

// checkNetworkFS returns a *degradeError when path (or, if missing, its
// nearest existing ancestor) is on a network filesystem.
func (w *Watcher) checkNetworkFS(path string) error {
	probe := w.opts.networkFS
	if probe == nil {
		probe = networkFilesystem
	}
	if name, remote := probe(nearestExisting(path)); remote {
		return &degradeError{reason: fmt.Sprintf("root is on a network filesystem (%s), where fsnotify misses remote changes", name)}
	}
	return nil
}

// process handles everything drained since the last call.
func (n *notifier) process() error {
	events, overflow := n.q.take()
	// Events next to a missing root (its ancestor's) are not changes of
	// the tree, so they leave LastEvent alone.
	if n.attached && (len(events) > 0 || overflow) {
		now := time.Now()
		n.w.setStatus(func(s *Status) { s.LastEvent = now })
	}
	for _, ev := range events {
		if err := n.handle(ev); err != nil {
			return err
		}
	}
	if overflow {
		n.w.log.Warn("fsnotify events were dropped; asking for a rescan")
		n.b.markRescan()
		if err := n.resync(); err != nil {
			return err
		}
	}
	n.publishCount()
	return nil
}

// handle applies one fsnotify event.
func (n *notifier) handle(ev fsnotify.Event) error {
	name := filepath.Clean(ev.Name)
	if !n.attached {
		if name == n.anchor && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
			n.anchor = "" // fsnotify dropped the watch with the directory
		}
		return n.settle()
	}
	if name == n.w.root {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			n.detach()
			return n.settle()
		}
		return nil
	}
	if _, below := n.w.rel(name); !below {
		return nil // a stale watch reporting an old path
	}
	wasDir := n.dirs.has(name)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if wasDir {
			n.dirs.removeTree(name, n.unwatch)
		}
		if !n.w.skipped(name, wasDir) {
			n.b.add(name)
		}
	}
	if ev.Has(fsnotify.Create) {
		info, err := os.Lstat(name)
		isDir := err == nil && info.IsDir()
		if n.w.skipped(name, isDir) {
			return nil
		}
		n.b.add(name)
		if isDir {
			if n.dirs.has(name) { // a directory renamed over another
				n.dirs.removeTree(name, n.unwatch)
			}
			return n.addTree(name, n.w.depth(name), true)
		}
	}
	if ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod) {
		if !n.w.skipped(name, wasDir) {
			n.b.add(name)
		}
	}
	return nil
}

// settle attaches to the root when it exists as a directory, and otherwise
// watches its nearest existing ancestor so its creation is noticed.
func (n *notifier) settle() error {
	defer n.publishCount()
	for range maxSettleSteps {
		if n.attached {
			return nil
		}
		if info, err := os.Stat(n.w.root); err == nil && info.IsDir() {
			return n.attach()
		}
		anc := nearestExisting(filepath.Dir(n.w.root))
		n.rootWasMissing = true
		n.w.setStatus(func(s *Status) { s.Waiting = true })
		if anc != n.anchor {
			n.dropAnchor()
			if err := n.addWatch(anc); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // the ancestor vanished meanwhile: look again
				}
				if reason, ok := watchLimitReason(err); ok {
					return &degradeError{reason: reason}
				}
				// Without this watch the root's creation would go unnoticed.
				return &degradeError{reason: fmt.Sprintf("cannot watch %s for the missing root: %v", anc, err)}
			}
			n.anchor = anc
		}
		// The next level may have appeared before the watch was in place.
		if nearestExisting(filepath.Dir(n.w.root)) == anc && !dirExists(n.w.root) {
			return nil
		}
	}
	return nil
}

// attach watches the whole tree below the existing root.
func (n *notifier) attach() error {
	if n.w.opts.Mode == ModeAuto && n.rootWasMissing {
		if err := n.w.checkNetworkFS(n.w.root); err != nil {
			return err
		}
	}
	n.dropAnchor()
	synth := n.rootWasMissing
	if synth {
		n.b.add(n.w.root)
	}
	if err := n.addTree(n.w.root, 0, synth); err != nil {
		return err
	}
	n.attached = true
	n.rootWasMissing = false
	n.w.setStatus(func(s *Status) { s.Waiting = false })
	n.w.log.Debug("watching root", zap.Int("dirs", n.dirs.len()))
	return nil
}

// detach forgets every watch after the root vanished and asks for a rescan.
func (n *notifier) detach() {
	n.w.log.Info("root vanished; waiting for it to reappear")
	n.dirs.clear(n.unwatch)
	n.attached = false
	n.rootWasMissing = true
	n.b.markRescan()
}

// resync repairs the watches after events were lost: watches of
// directories that are gone are dropped first (so a renamed directory's
// old watch cannot shadow its new path), then every directory is watched.
func (n *notifier) resync() error {
	if !n.attached {
		return n.settle()
	}
	if !dirExists(n.w.root) {
		n.detach()
		return n.settle()
	}
	for _, d := range n.dirs.all() {
		if n.dirs.has(d) && !dirExists(d) {
			n.dirs.removeTree(d, n.unwatch)
		}
	}
	return n.addTree(n.w.root, 0, false)
}

// addTree watches dir and every directory below it that Skip allows. With
// synth set it reports everything found as changed: those entries may have
// been created before the watch was in place, so no event announced them.
//
// depth is dir's depth below the root (the root's is 0); with
// Options.MaxDepth a directory deeper is ignored, and one at that depth is
// watched without being listed.
func (n *notifier) addTree(dir string, depth int, synth bool) error {
	limit := n.w.opts.MaxDepth
	if limit > 0 && depth > limit {
		return nil
	}
	if n.w.opts.Yield != nil {
		n.w.opts.Yield(n.ctx)
	}
	if err := n.addWatch(dir); err != nil {
		if reason, ok := watchLimitReason(err); ok {
			return &degradeError{reason: reason}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case depth == 0:
			// Without a watch on the root nothing below it would ever be
			// reported: the root counted as attached, and no event came
			// (Wine, a root made a moment before: "CreateIoCompletionPort:
			// Invalid handle").
			return &degradeError{reason: fmt.Sprintf("cannot watch the root %s: %v", dir, err)}
		default:
			n.w.log.Warn("cannot watch directory", zap.String("dir", dir), zap.Error(err))
		}
		return nil
	}
	n.dirs.add(dir)
	if limit > 0 && depth == limit {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			n.w.log.Warn("cannot list directory", zap.String("dir", dir), zap.Error(err))
		}
		return nil
	}
	for _, e := range entries {
		p := joinName(dir, e.Name())
		isDir := e.IsDir() // a symlink is not a directory here: never followed
		if n.w.skipped(p, isDir) {
			continue
		}
		if synth {
			n.b.add(p)
		}
		if isDir {
			if err := n.addTree(p, depth+1, synth); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinName is filepath.Join(dir, name) for a clean dir and a name read
// from its listing (one plain name), without the Clean that Join does for
// every directory watched.
func joinName(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) { // the filesystem root
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

func (n *notifier) addWatch(dir string) error {
	if hook := n.w.opts.addWatchHook; hook != nil {
		if err := hook(dir); err != nil {
			return fmt.Errorf("watching %s: %w", dir, err)
		}
	}
	if err := n.fw.Add(dir); err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	return nil
}

// unwatch removes the watch on dir; fsnotify may already have dropped it
// when the directory went away, which is fine.
func (n *notifier) unwatch(dir string) {
	if err := n.fw.Remove(dir); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
		n.w.log.Debug("removing watch", zap.String("dir", dir), zap.Error(err))
	}
}

func (n *notifier) dropAnchor() {
	if n.anchor != "" {
		n.unwatch(n.anchor)
		n.anchor = ""
	}
}

func (n *notifier) publishCount() {
	count := n.dirs.len()
	if n.anchor != "" {
		count++
	}
	n.w.setStatus(func(s *Status) { s.WatchedDirs = count })
}

// watchLimitReason recognises errors meaning an inotify limit is exhausted.
func watchLimitReason(err error) (string, bool) {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches): %v", err), true
	case errors.Is(err, syscall.EMFILE):
		return fmt.Sprintf("inotify instance limit reached (fs.inotify.max_user_instances): %v", err), true
	case errors.Is(err, syscall.ENFILE):
		return fmt.Sprintf("system file table full: %v", err), true
	}
	return "", false
}

// nearestExisting returns path or its closest ancestor that exists as a
// directory.
func nearestExisting(path string) string {
	for {
		if dirExists(path) {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// eventQueue decouples fsnotify's channels, drained by one goroutine, from
// processing in another, with a bound: past max queued events it drops them
// all and reports an overflow, which turns into a rescan.
type eventQueue struct {
	max        int
	signal     chan struct{} // capacity 1: "there is something to take"
	onOverflow func()        // nil, or a test's hook run when push drops the queue

	// mu guards events and overflow.
	mu       sync.Mutex
	events   []fsnotify.Event
	overflow bool
}

func newEventQueue(max int, onOverflow func()) *eventQueue {
	return &eventQueue{max: max, signal: make(chan struct{}, 1), onOverflow: onOverflow}
}

// drain moves everything fsnotify reports into the queue until fsnotify's
// channels close.
func (q *eventQueue) drain(fw *fsnotify.Watcher, log *zap.Logger) {
	events, errs := fw.Events, fw.Errors
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			q.push(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				// Any other read error may also have cost events.
				log.Warn("fsnotify error", zap.Error(err))
			}
			q.markOverflow()
		}
	}
}

func (q *eventQueue) push(ev fsnotify.Event) {
	dropped := false
	q.mu.Lock()
	switch {
	case q.overflow:
	case len(q.events) >= q.max:
		q.overflow = true
		q.events = nil
		dropped = true
	default:
		q.events = append(q.events, ev)
	}
	q.mu.Unlock()
	if dropped && q.onOverflow != nil {
		q.onOverflow()
	}
	q.notify()
}

func (q *eventQueue) markOverflow() {
	q.mu.Lock()
	q.overflow = true
	q.events = nil
	q.mu.Unlock()
	q.notify()
}

func (q *eventQueue) notify() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns and clears what was queued.
func (q *eventQueue) take() ([]fsnotify.Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	events, overflow := q.events, q.overflow
	q.events, q.overflow = nil, false
	return events, overflow
}
