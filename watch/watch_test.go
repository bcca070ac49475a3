package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestChanges runs the same table of file-system changes against fsnotify
// and polling.
func TestChanges(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		act   func(t *testing.T, root string)
		want  []string // relative to root
	}{
		{
			name: "create file",
			act:  func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "a.txt"), "x") },
			want: []string{"a.txt"},
		},
		{
			name:  "append to file",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "log.jsonl"), "{}\n") },
			act:   func(t *testing.T, root string) { appendFile(t, filepath.Join(root, "log.jsonl"), "{\"a\":1}\n") },
			want:  []string{"log.jsonl"},
		},
		{
			name:  "delete file",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "gone.txt"), "x") },
			act: func(t *testing.T, root string) {
				if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"gone.txt"},
		},
		{
			name:  "rename file",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "d", "old.txt"), "x") },
			act: func(t *testing.T, root string) {
				if err := os.Rename(filepath.Join(root, "d", "old.txt"), filepath.Join(root, "new.txt")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"d/old.txt", "new.txt"},
		},
		{
			name: "directory tree moved in with files already inside",
			act: func(t *testing.T, root string) {
				stage := filepath.Join(filepath.Dir(root), "stage")
				writeFile(t, filepath.Join(stage, "d2", "f1"), "1")
				writeFile(t, filepath.Join(stage, "f2"), "2")
				if err := os.Rename(stage, filepath.Join(root, "d1")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"d1", "d1/d2", "d1/d2/f1", "d1/f2"},
		},
		{
			name: "nested directories created at once",
			act: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "p", "q", "r", "s.txt"), "x")
			},
			want: []string{"p", "p/q", "p/q/r", "p/q/r/s.txt"},
		},
		{
			name:  "file created in a renamed directory",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "a", "b", "keep.txt"), "x") },
			act: func(t *testing.T, root string) {
				if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "c")); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(root, "c", "b", "new.txt"), "x")
			},
			want: []string{"a", "c", "c/b/new.txt"},
		},
		{
			name:  "directory tree removed",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "t", "u", "v.txt"), "x") },
			act: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "t")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"t", "t/u", "t/u/v.txt"},
		},
	}
	bothModes(t, func(t *testing.T, mode Mode) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "root")
				mkdirAll(t, root)
				if tt.setup != nil {
					tt.setup(t, root)
				}
				r := start(t, Options{Root: root, Mode: mode})
				mark := r.c.mark()
				tt.act(t, root)
				r.c.waitPaths(t, mark, abs(root, tt.want...)...)
				for _, b := range r.c.since(mark) {
					if !slices.IsSorted(b.Paths) || len(slices.Compact(slices.Clone(b.Paths))) != len(b.Paths) {
						t.Errorf("batch paths not sorted and unique: %v", b.Paths)
					}
					for _, p := range b.Paths {
						if !filepath.IsAbs(p) || !strings.HasPrefix(p, root) {
							t.Errorf("path %q is not absolute below the root", p)
						}
					}
				}
			})
		}
	})
}

// TestSkip checks that skipped directories are neither reported nor
// descended into, while their neighbours are.
func TestSkip(t *testing.T) {
	bothModes(t, func(t *testing.T, mode Mode) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref")
		skip := func(rel string, isDir bool) bool {
			base := filepath.Base(rel)
			return isDir && (base == ".git" || base == "node_modules")
		}
		r := start(t, Options{Root: root, Mode: mode, Skip: skip})
		mark := r.c.mark()
		writeFile(t, filepath.Join(root, ".git", "index"), "x")
		writeFile(t, filepath.Join(root, "sub", "node_modules", "pkg", "a.js"), "x")
		writeFile(t, filepath.Join(root, "sub", "ok.txt"), "x")
		r.c.waitPaths(t, mark, abs(root, "sub", "sub/ok.txt")...)
		// A barrier: a file written after everything above is reported only
		// after every earlier event was handled (fsnotify's queue is in
		// order), or by a later pass (poll), so anything wrongly seen in a
		// skipped directory would have been reported by then.
		barrier := r.c.mark()
		writeFile(t, filepath.Join(root, "sub", "barrier.txt"), "x")
		r.c.waitPaths(t, barrier, abs(root, "sub/barrier.txt")...)
		for _, b := range r.c.since(mark) {
			for _, p := range b.Paths {
				if strings.Contains(p, ".git") || strings.Contains(p, "node_modules") {
					t.Errorf("skipped path reported: %s", p)
				}
			}
		}
	})
}

// TestBurst checks that 10,000 files created in a burst are all reported,
// in few batches.
func TestBurst(t *testing.T) {
	const files = 10000
	bothModes(t, func(t *testing.T, mode Mode) {
		root := t.TempDir()
		dir := filepath.Join(root, "burst")
		mkdirAll(t, dir)
		r := start(t, Options{Root: root, Mode: mode})
		mark := r.c.mark()
		want := make([]string, files)
		begin := time.Now()
		for i := range files {
			want[i] = filepath.Join(dir, fmt.Sprintf("f%05d", i))
			f, err := os.Create(want[i])
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		created := time.Since(begin)
		last := r.c.waitPaths(t, mark, want...)
		got := r.c.since(mark)
		elapsed := last.Sub(begin)
		// A batch goes out at the latest MaxWait after the previous one under a
		// constant stream, or after Debounce of quiet; either way no more than
		// elapsed/Debounce batches, plus the first and last.
		limit := int(elapsed/DefaultDebounce) + 2
		if mode == ModePoll {
			limit = int(elapsed/testPollInterval) + 2
		}
		t.Logf("%s: %d files created in %v, all delivered after %v in %d batches (limit %d)",
			mode, files, created.Round(time.Millisecond), elapsed.Round(time.Millisecond), len(got), limit)
		if len(got) > limit {
			t.Errorf("%d batches for %d files, want at most %d", len(got), files, limit)
		}
		for _, b := range got {
			if b.Rescan {
				t.Errorf("unexpected rescan during the burst")
			}
		}
	})
}

// TestRootCreatedAfterStart checks that a missing root is attached when it
// appears, with everything already inside it reported.
func TestRootCreatedAfterStart(t *testing.T) {
	bothModes(t, func(t *testing.T, mode Mode) {
		base := t.TempDir()
		root := filepath.Join(base, "home", ".dsh", "sessions")
		r := start(t, Options{Root: root, Mode: mode})
		if st := r.w.Status(); !st.Waiting {
			t.Errorf("Status().Waiting = false before the root exists: %+v", st)
		}
		mark := r.c.mark()
		mkdirAll(t, filepath.Join(base, "home"))
		time.Sleep(30 * time.Millisecond) // one level at a time, as a real install does
		writeFile(t, filepath.Join(root, "--proj--", "id1", "session.jsonl"), "{}\n")
		r.c.waitPaths(t, mark, abs(root, "--proj--", "--proj--/id1", "--proj--/id1/session.jsonl")...)

		mark = r.c.mark()
		writeFile(t, filepath.Join(root, "--proj--", "id2", "session.jsonl"), "{}\n")
		r.c.waitPaths(t, mark, abs(root, "--proj--/id2/session.jsonl")...)
		if st := r.w.Status(); st.Waiting || st.WatchedDirs == 0 {
			t.Errorf("Status after attaching = %+v, want not waiting with watched dirs", st)
		}
	})
}

// TestRootRemoved checks that a vanished root asks for a rescan and is
// attached again when it comes back.
func TestRootRemoved(t *testing.T) {
	bothModes(t, func(t *testing.T, mode Mode) {
		root := filepath.Join(t.TempDir(), "sessions")
		writeFile(t, filepath.Join(root, "p", "s", "session.jsonl"), "{}\n")
		r := start(t, Options{Root: root, Mode: mode})
		mark := r.c.mark()
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		r.c.waitRescan(t, mark)

		mark = r.c.mark()
		writeFile(t, filepath.Join(root, "p2", "session.jsonl"), "{}\n")
		r.c.waitPaths(t, mark, abs(root, "p2/session.jsonl")...)
		mark = r.c.mark()
		appendFile(t, filepath.Join(root, "p2", "session.jsonl"), "{}\n")
		r.c.waitPaths(t, mark, abs(root, "p2/session.jsonl")...)
	})
}

// TestForcedWatchLimit checks the fallback to polling when adding a watch
// fails with ENOSPC or EMFILE, at start and later, reported exactly once.
func TestForcedWatchLimit(t *testing.T) {
	tests := []struct {
		name     string
		errno    syscall.Errno
		failDir  string // the watch on this directory (relative) fails
		existing bool   // the directory exists before start
		wantWord string
	}{
		{name: "ENOSPC at start", errno: syscall.ENOSPC, failDir: "a/b", existing: true, wantWord: "max_user_watches"},
		{name: "EMFILE at start", errno: syscall.EMFILE, failDir: "a", existing: true, wantWord: "max_user_instances"},
		{name: "ENOSPC on a new directory", errno: syscall.ENOSPC, failDir: "late/deeper", wantWord: "max_user_watches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "a", "b", "c", "f.txt"), "x")
			var degraded atomic.Int32
			var reason atomic.Value
			failAt := filepath.Join(root, filepath.FromSlash(tt.failDir))
			r := start(t, Options{
				Root: root,
				Mode: ModeAuto,
				OnDegraded: func(why string) {
					degraded.Add(1)
					reason.Store(why)
				},
				addWatchHook: func(dir string) error {
					if strings.HasPrefix(dir, failAt) {
						return tt.errno
					}
					return nil
				},
			})
			mark := r.c.mark()
			if !tt.existing {
				if st := r.w.Status(); st.Mode != ModeFsnotify {
					t.Fatalf("mode before the failure = %q, want fsnotify", st.Mode)
				}
				writeFile(t, filepath.Join(failAt, "x.txt"), "x")
				r.c.waitRescan(t, mark)
			}
			mark = r.c.mark()
			writeFile(t, filepath.Join(root, "a", "b", "c", "after.txt"), "x")
			r.c.waitPaths(t, mark, abs(root, "a/b/c/after.txt")...)

			st := r.w.Status()
			if st.Mode != ModePoll || !strings.Contains(st.Degraded, tt.wantWord) {
				t.Errorf("Status = %+v, want poll mode degraded for %s", st, tt.wantWord)
			}
			r.stop()
			if n := degraded.Load(); n != 1 {
				t.Errorf("OnDegraded called %d times, want once", n)
			}
			if why, _ := reason.Load().(string); why != st.Degraded {
				t.Errorf("OnDegraded reason %q differs from Status().Degraded %q", why, st.Degraded)
			}
		})
	}
}

// TestNetworkFilesystem checks that auto mode polls a network root while an
// explicit fsnotify mode keeps fsnotify.
func TestNetworkFilesystem(t *testing.T) {
	nfs := func(string) (string, bool) { return "nfs", true }
	tests := []struct {
		mode         Mode
		wantMode     Mode
		wantDegraded bool
	}{
		{ModeAuto, ModePoll, true},
		{ModeFsnotify, ModeFsnotify, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			root := t.TempDir()
			var calls atomic.Int32
			r := start(t, Options{Root: root, Mode: tt.mode, networkFS: nfs,
				OnDegraded: func(string) { calls.Add(1) }})
			mark := r.c.mark()
			writeFile(t, filepath.Join(root, "f"), "x")
			r.c.waitPaths(t, mark, abs(root, "f")...)
			st := r.w.Status()
			if st.Mode != tt.wantMode || (st.Degraded != "") != tt.wantDegraded {
				t.Errorf("Status = %+v, want mode %s degraded %v", st, tt.wantMode, tt.wantDegraded)
			}
			if tt.wantDegraded && !strings.Contains(st.Degraded, "nfs") {
				t.Errorf("reason %q does not name the filesystem", st.Degraded)
			}
			r.stop()
			if got, want := calls.Load(), map[bool]int32{true: 1, false: 0}[tt.wantDegraded]; got != want {
				t.Errorf("OnDegraded called %d times, want %d", got, want)
			}
		})
	}
}

// TestOverflowAsksForRescan holds the processing goroutine (inside the
// add-watch hook) while more events arrive than the queue may hold, then
// checks for a rescan batch and for watches repaired afterwards.
func TestOverflowAsksForRescan(t *testing.T) {
	root := t.TempDir()
	hold := filepath.Join(root, "hold")
	entered := make(chan struct{})
	release := make(chan struct{})
	var holdOnce, overflowOnce sync.Once
	overflowed := make(chan struct{})
	r := start(t, Options{Root: root, Mode: ModeFsnotify, maxQueuedEvents: 4,
		queueOverflowHook: func() { overflowOnce.Do(func() { close(overflowed) }) },
		addWatchHook: func(dir string) error {
			if dir == hold {
				holdOnce.Do(func() {
					close(entered)
					<-release
				})
			}
			return nil
		}})
	mark := r.c.mark()
	mkdirAll(t, hold)
	<-entered
	for i := range 50 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("f%d", i)), "x")
	}
	// Created while events are being dropped: only the resync can watch it.
	mkdirAll(t, filepath.Join(root, "lost"))
	select {
	case <-overflowed:
	case <-time.After(waitTimeout):
		t.Fatal("the event queue never passed its bound of 4")
	}
	close(release)
	r.c.waitRescan(t, mark)
	mark = r.c.mark()
	writeFile(t, filepath.Join(root, "lost", "later.txt"), "x")
	r.c.waitPaths(t, mark, abs(root, "lost/later.txt")...)
}

// TestDebounce checks that a burst of writes becomes one batch after the
// quiet period, and that a continuous stream still delivers every MaxWait.
// Both need the writer to run without stalls longer than the debounce
// period; on a machine too loaded for that, an attempt is repeated.
func TestDebounce(t *testing.T) {
	const (
		debounce = 50 * time.Millisecond
		maxWait  = 200 * time.Millisecond
		attempts = 3
	)
	t.Run("burst", func(t *testing.T) {
		for attempt := 1; ; attempt++ {
			root := t.TempDir()
			path := filepath.Join(root, "f")
			writeFile(t, path, "")
			r := start(t, Options{Root: root, Mode: ModeFsnotify, Debounce: debounce, MaxWait: maxWait})
			mark := r.c.mark()
			begin := time.Now()
			var lastWrite time.Time
			for range 5 {
				// Taken before the write: its event cannot come earlier,
				// however long the write itself is held up.
				lastWrite = time.Now()
				appendFile(t, path, "x")
			}
			at := r.c.waitPaths(t, mark, path)
			time.Sleep(2 * debounce) // a second batch would show up by now
			r.stop()
			if stall := lastWrite.Sub(begin); stall >= debounce/2 {
				if attempt < attempts {
					t.Logf("attempt %d: 5 writes took %v on a loaded machine; again", attempt, stall)
					continue
				}
				t.Skipf("5 writes took %v each time; the machine is too loaded to test debouncing", stall)
			}
			if got := r.c.since(mark); len(got) != 1 {
				t.Errorf("5 quick writes gave %d batches, want 1: %v", len(got), summarize(got))
			}
			if wait := at.Sub(lastWrite); wait < debounce {
				t.Errorf("batch arrived %v after the last write, before the %v debounce", wait, debounce)
			}
			return
		}
	})
	t.Run("continuous stream", func(t *testing.T) {
		const (
			interval = 10 * time.Millisecond // far below debounce: never quiet
			stream   = 1200 * time.Millisecond
		)
		for attempt := 1; ; attempt++ {
			root := t.TempDir()
			path := filepath.Join(root, "f")
			writeFile(t, path, "")
			r := start(t, Options{Root: root, Mode: ModeFsnotify, Debounce: debounce, MaxWait: maxWait})
			mark := r.c.mark()
			begin := time.Now()
			last, stall := begin, time.Duration(0)
			for time.Since(begin) < stream {
				appendFile(t, path, "x")
				now := time.Now()
				stall = max(stall, now.Sub(last))
				last = now
				time.Sleep(interval)
			}
			r.c.waitPaths(t, mark, path)
			r.stop()
			if stall >= debounce {
				if attempt < attempts {
					t.Logf("attempt %d: the writer stalled %v on a loaded machine; again", attempt, stall)
					continue
				}
				t.Skipf("the writer stalled %v each time; the machine is too loaded to test max wait", stall)
			}
			// The stream never paused for the debounce period, so every batch
			// delivered before it ended was forced out by MaxWait.
			var during []received
			for _, b := range r.c.since(mark) {
				if b.at.Before(last) {
					during = append(during, b)
				}
			}
			if len(during) < 2 {
				t.Fatalf("%d batches during a %v stream, want several (about one per %v): %v",
					len(during), stream, maxWait, summarize(during))
			}
			if first := during[0].at.Sub(begin); first > maxWait+freshnessBound {
				t.Errorf("first batch after %v, want about MaxWait %v", first, maxWait)
			}
			if most := int(stream/maxWait) + 1; len(during) > most {
				t.Errorf("%d batches during the stream, want at most %d: the debounce timer fired mid-stream", len(during), most)
			}
			t.Logf("%d batches during a %v stream (MaxWait %v, longest writer stall %v)", len(during), stream, maxWait, stall)
			return
		}
	})
}

// TestPollUnreadableLoggedOnce checks that a directory that cannot be listed
// is logged once while it stays unreadable, and again if it fails anew.
func TestPollUnreadableLoggedOnce(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "bad")
	mkdirAll(t, bad)
	var failing atomic.Bool
	failing.Store(true)
	var passes atomic.Int32
	core, logs := observer.New(zapcore.WarnLevel)
	r := start(t, Options{Root: root, Mode: ModePoll, Logger: zap.New(core),
		pollReadDir: func(dir string) ([]os.DirEntry, error) {
			if dir == root {
				passes.Add(1)
			}
			if dir == bad && failing.Load() {
				return nil, syscall.EACCES
			}
			return readDirUnsorted(dir)
		}})
	waitPasses := func(n int32) {
		target := passes.Load() + n
		deadline := time.Now().Add(waitTimeout)
		for passes.Load() < target {
			if time.Now().After(deadline) {
				t.Fatalf("poller made fewer than %d passes", n)
			}
			time.Sleep(testPollInterval / 2)
		}
	}
	waitPasses(5)
	count := func() int { return logs.FilterMessage("cannot list directory while polling").Len() }
	if n := count(); n != 1 {
		t.Errorf("unreadable directory logged %d times over 5+ passes, want 1", n)
	}
	failing.Store(false)
	waitPasses(2)
	failing.Store(true)
	waitPasses(3)
	if n := count(); n != 2 {
		t.Errorf("after recovering and failing again: logged %d times, want 2", n)
	}
	r.stop()
}

// TestModeOff checks that mode off delivers nothing and stops on cancel.
func TestModeOff(t *testing.T) {
	root := t.TempDir()
	r := start(t, Options{Root: root, Mode: ModeOff})
	writeFile(t, filepath.Join(root, "f"), "x")
	// A negative check: no event marks "nothing will come", so the pause
	// only gives a watcher that wrongly watches time to deliver.
	time.Sleep(100 * time.Millisecond)
	if got := r.c.since(0); len(got) != 0 {
		t.Errorf("mode off delivered %v", summarize(got))
	}
	if st := r.w.Status(); st.Mode != ModeOff {
		t.Errorf("Status().Mode = %q, want off", st.Mode)
	}
}

// TestRunStopsAllGoroutines checks that nothing Run started outlives it.
func TestRunStopsAllGoroutines(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeFsnotify, ModePoll, ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			root := t.TempDir()
			r := start(t, Options{Root: root, Mode: mode})
			writeFile(t, filepath.Join(root, "d", "f"), "x")
			if mode != ModeOff {
				r.c.waitPaths(t, 0, filepath.Join(root, "d", "f"))
			}
			r.stop()
		})
	}
	t.Run("slow consumer", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		root := t.TempDir()
		w, err := New(Options{Root: root, Mode: ModeFsnotify, Debounce: time.Millisecond, MaxWait: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		inDeliver := make(chan struct{}, 1)
		done := make(chan error)
		go func() {
			done <- w.Run(ctx, func(Batch) {
				select {
				case inDeliver <- struct{}{}:
				default:
				}
				time.Sleep(100 * time.Millisecond)
			})
		}()
		<-w.Ready()
		writeFile(t, filepath.Join(root, "f"), "x")
		<-inDeliver
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no root", Options{}, "Root is required"},
		{"bad mode", Options{Root: "/x", Mode: "inotify"}, "unknown watch mode"},
		{"negative", Options{Root: "/x", Debounce: -1}, "negative"},
		{"max wait below debounce", Options{Root: "/x", Debounce: time.Second, MaxWait: time.Millisecond}, "MaxWait"},
		{"spinning poll", Options{Root: "/x", PollInterval: time.Microsecond}, "PollInterval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	w, err := New(Options{Root: "rel/dir"})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Status(); !filepath.IsAbs(st.Root) || st.Mode != ModeAuto {
		t.Errorf("defaults: Status = %+v, want absolute root and auto mode", st)
	}
	if w.opts.Debounce != DefaultDebounce || w.opts.MaxWait != DefaultMaxWait || w.opts.PollInterval != DefaultPollInterval {
		t.Errorf("defaults not applied: %+v", w.opts)
	}
}

func TestRunTwice(t *testing.T) {
	r := start(t, Options{Root: t.TempDir(), Mode: ModeOff})
	if err := r.w.Run(context.Background(), func(Batch) {}); err == nil {
		t.Error("second Run succeeded")
	}
}

// TestRootSymlink checks that a root reached through a symbolic link is
// watched, with paths reported under the root as given.
func TestRootSymlink(t *testing.T) {
	bothModes(t, func(t *testing.T, mode Mode) {
		base := t.TempDir()
		real := filepath.Join(base, "real")
		mkdirAll(t, real)
		root := filepath.Join(base, "link")
		if err := os.Symlink(real, root); err != nil {
			t.Fatal(err)
		}
		r := start(t, Options{Root: root, Mode: mode})
		mark := r.c.mark()
		writeFile(t, filepath.Join(real, "d", "f"), "x")
		r.c.waitPaths(t, mark, abs(root, "d", "d/f")...)
	})
}

// TestMaxDepth watches a sessions-like tree with MaxDepth 2: directories at
// depth 2 are watched (their files' changes are reported, and a new one is
// reported itself), deeper ones are neither watched nor reported.
func TestMaxDepth(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "p", "s1", "log"), "a\n")
	writeFile(t, filepath.Join(root, "p", "s1", "deep", "x"), "x")
	var mu sync.Mutex
	var watched []string
	hook := func(dir string) error {
		mu.Lock()
		watched = append(watched, dir)
		mu.Unlock()
		return nil
	}
	r := start(t, Options{Root: root, Mode: ModeFsnotify, MaxDepth: 2, addWatchHook: hook})
	mu.Lock()
	got := slices.Clone(watched)
	mu.Unlock()
	slices.Sort(got)
	if want := abs(root, ".", "p", "p/s1"); !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
	mark := r.c.mark()
	appendFile(t, filepath.Join(root, "p", "s1", "log"), "b\n")
	r.c.waitPaths(t, mark, abs(root, "p/s1/log")...)

	mark = r.c.mark()
	writeFile(t, filepath.Join(root, "p", "s2", "log"), "a\n")
	r.c.waitPaths(t, mark, abs(root, "p/s2")...)
	mark = r.c.mark()
	appendFile(t, filepath.Join(root, "p", "s2", "log"), "b\n")
	r.c.waitPaths(t, mark, abs(root, "p/s2/log")...)
	mu.Lock()
	for _, d := range watched {
		if strings.Contains(d, "deep") {
			t.Errorf("watched %s, deeper than MaxDepth", d)
		}
	}
	mu.Unlock()
}

// TestAttachYieldsBeforeEachWatch: with fsnotify, Options.Yield is called
// before each directory gets its watch, with the context Run was given,
// and the watcher is not ready while it holds the attach.
func TestAttachYieldsBeforeEachWatch(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "p", "s1", "log"), "a\n")
	writeFile(t, filepath.Join(root, "p", "s2", "log"), "a\n")
	writeFile(t, filepath.Join(root, "q", "s3", "log"), "a\n")
	var mu sync.Mutex
	var yields int
	var watches []string
	var pending string // a directory whose watch no Yield came before
	release := make(chan struct{})
	first := true
	yield := func(ctx context.Context) {
		if ctx == nil || ctx.Err() != nil {
			t.Error("Yield was not given Run's live context")
		}
		mu.Lock()
		wait := first
		first = false
		yields++
		mu.Unlock()
		if wait {
			<-release
		}
	}
	hook := func(dir string) error {
		mu.Lock()
		defer mu.Unlock()
		watches = append(watches, dir)
		if yields != len(watches) {
			pending = dir
		}
		return nil
	}
	w, err := New(Options{Root: root, Mode: ModeFsnotify, MaxDepth: 2, Yield: yield, addWatchHook: hook})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, newCollector().deliver) }()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-w.Ready():
		t.Fatal("the watcher was ready while Yield held its attach")
	case <-time.After(100 * time.Millisecond):
		// Not a synchronisation: only a chance for a wrong return to show.
	}
	close(release)
	select {
	case <-w.Ready():
	case <-time.After(waitTimeout):
		t.Fatalf("watcher not ready after %v", waitTimeout)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(watches) != 6 || yields != len(watches) || pending != "" {
		t.Errorf("%d yields for %d watches (%v); want one before each of the 6 directories (a watch without one: %q)", yields, len(watches), watches, pending)
	}
}

// TestRootThatCannotBeWatchedIsPolled: a root whose own watch fails (for
// a reason other than the watch limits, or its being gone) hands over to
// polling, which reports what changes below it, instead of counting as
// attached with no watch and reporting nothing.
func TestRootThatCannotBeWatchedIsPolled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "p", "s1", "log"), "a\n")
	var watches atomic.Int32
	r := start(t, Options{Root: root, Mode: ModeFsnotify, addWatchHook: func(dir string) error {
		if watches.Add(1) == 1 { // the root's, the first the attach adds
			return errors.New("createIoCompletionPort: invalid handle")
		}
		return nil
	}})
	mark := r.c.mark()
	appendFile(t, filepath.Join(root, "p", "s1", "log"), "b\n")
	r.c.waitPaths(t, mark, abs(root, "p/s1/log")...)
	if st := r.w.Status(); st.Mode != ModePoll || !strings.Contains(st.Degraded, "cannot watch the root") {
		t.Errorf("Status = %+v, want poll mode, degraded because the root cannot be watched", st)
	}
}
