package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// pollLoadFactor keeps polling from hogging the CPU on a huge tree: the
// pause after a pass is at least this many times the pass's own duration,
// so polling never takes more than 1/(1+pollLoadFactor) of a core.
const pollLoadFactor = 4

// fileState is what a poll pass remembers of one path.
type fileState struct {
	size  int64
	mtime int64 // nanoseconds
	inode uint64
	isDir bool
}

// changedFrom reports whether s differs from old in a way a consumer cares
// about. A directory's size and mtime change with its entries, which are
// reported themselves, so only its identity counts.
func (s fileState) changedFrom(old fileState) bool {
	if s.isDir != old.isDir || s.inode != old.inode {
		return true
	}
	return !s.isDir && (s.size != old.size || s.mtime != old.mtime)
}

// poller holds the state of polling mode, owned by the goroutine running
// runPoll.
type poller struct {
	w *Watcher
	// snap is the previous pass: every path at or below the root.
	snap map[string]fileState
	// unreadable holds directories that failed to list in the previous
	// pass, so each is logged once rather than every pass.
	unreadable map[string]struct{}
	dirs       int // directories in the previous pass
	readDir    func(dir string) ([]fs.DirEntry, error)
}

// runPoll stats the tree every PollInterval until ctx is done.
func (w *Watcher) runPoll(ctx context.Context, b *batcher) {
	w.setStatus(func(s *Status) { s.Mode = ModePoll })
	p := &poller{w: w, unreadable: make(map[string]struct{}), readDir: readDirUnsorted}
	if w.opts.pollReadDir != nil {
		p.readDir = w.opts.pollReadDir
	}
	next, ok := p.scan(ctx)
	if !ok {
		return
	}
	p.commit(next)
	w.markReady()
	b.flushNow() // what the fsnotify engine left pending, if anything

	wait := time.NewTimer(w.opts.PollInterval)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.timerC():
			b.onTimer()
		case <-b.deliveredC():
			b.onDelivered()
		case <-wait.C:
			start := time.Now()
			next, ok := p.scan(ctx)
			if !ok {
				return
			}
			if p.diff(next, b) {
				w.setStatus(func(s *Status) { s.LastEvent = start })
				b.flushNow()
			}
			p.commit(next)
			wait.Reset(max(w.opts.PollInterval, pollLoadFactor*time.Since(start)))
		}
	}
}

// commit makes next the previous pass and publishes its size.
func (p *poller) commit(next map[string]fileState) {
	p.snap = next
	p.w.setStatus(func(s *Status) {
		s.WatchedDirs = p.dirs
		s.Waiting = len(next) == 0
	})
}

// diff records every path that differs between the previous pass and next;
// a root that vanished also asks for a rescan. It reports whether anything
// changed.
func (p *poller) diff(next map[string]fileState, b *batcher) bool {
	changed := false
	for path, st := range next {
		if old, ok := p.snap[path]; !ok || st.changedFrom(old) {
			b.add(path)
			changed = true
		}
	}
	for path := range p.snap {
		if _, ok := next[path]; !ok {
			b.add(path)
			changed = true
		}
	}
	if _, had := p.snap[p.w.root]; had {
		if _, has := next[p.w.root]; !has {
			p.w.log.Info("root vanished; waiting for it to reappear")
			b.markRescan()
		}
	}
	return changed
}

// scan stats every path at or below the root that Skip allows, without
// following symbolic links below the root. It returns false when ctx ended
// the pass early. A missing root gives an empty map.
func (p *poller) scan(ctx context.Context) (map[string]fileState, bool) {
	next := make(map[string]fileState, len(p.snap))
	unreadable := make(map[string]struct{})
	p.dirs = 0
	info, err := os.Stat(p.w.root)
	if err != nil || !info.IsDir() {
		p.unreadable = unreadable
		return next, ctx.Err() == nil
	}
	next[p.w.root] = stateOf(info)
	stack := []string{p.w.root}
	for len(stack) > 0 {
		if ctx.Err() != nil {
			return nil, false
		}
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p.dirs++
		entries, err := p.readDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				unreadable[dir] = struct{}{}
				if _, logged := p.unreadable[dir]; !logged {
					p.w.log.Warn("cannot list directory while polling", zap.String("dir", dir), zap.Error(err))
				}
			}
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			isDir := e.IsDir()
			if p.w.skipped(path, isDir) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed since the listing; the next pass sees it gone
			}
			next[path] = stateOf(info)
			if isDir {
				stack = append(stack, path)
			}
		}
	}
	p.unreadable = unreadable
	return next, true
}

func stateOf(info fs.FileInfo) fileState {
	return fileState{
		size:  info.Size(),
		mtime: info.ModTime().UnixNano(),
		inode: inode(info),
		isDir: info.IsDir(),
	}
}

// readDirUnsorted lists dir without the sort os.ReadDir does, which a poll
// pass does not need.
func readDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
