package watch

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestDirSet(t *testing.T) {
	s := newDirSet()
	for _, d := range []string{"/r", "/r/a", "/r/a/b", "/r/a/b/c", "/r/ab", "/r/x"} {
		if !s.add(d) {
			t.Fatalf("add(%s) reported a duplicate", d)
		}
	}
	if s.add("/r/a") {
		t.Error("second add(/r/a) reported new")
	}
	var forgotten []string
	s.removeTree("/r/a", func(d string) { forgotten = append(forgotten, d) })
	if want := []string{"/r/a/b/c", "/r/a/b", "/r/a"}; !slices.Equal(forgotten, want) {
		t.Errorf("removeTree forgot %v, want %v (deepest first, /r/ab untouched)", forgotten, want)
	}
	if s.len() != 3 || !s.has("/r/ab") || s.has("/r/a/b") {
		t.Errorf("after removeTree: %v", s.all())
	}
	if kids := s.kids["/r"]; kids != 2 {
		t.Errorf("root counts %d children, want 2 (/r/ab, /r/x)", kids)
	}
	// A leaf leaves alone; its parent's count goes with it, so the parent
	// is then removed as a leaf too.
	forgotten = nil
	s.removeTree("/r/x", func(d string) { forgotten = append(forgotten, d) })
	if !slices.Equal(forgotten, []string{"/r/x"}) || s.kids["/r"] != 1 {
		t.Errorf("removeTree(/r/x) forgot %v, root counts %d children, want [/r/x] and 1", forgotten, s.kids["/r"])
	}
	if !s.add("/r/x") || s.kids["/r"] != 2 {
		t.Errorf("add(/r/x) again: root counts %d children, want 2", s.kids["/r"])
	}
	n := 0
	s.clear(func(string) { n++ })
	if n != 3 || s.len() != 0 || len(s.kids) != 0 {
		t.Errorf("clear forgot %d, left %d", n, s.len())
	}
}

func TestEventQueue(t *testing.T) {
	tests := []struct {
		name         string
		push         int
		overflowErr  bool
		wantEvents   int
		wantOverflow bool
	}{
		{name: "below bound", push: 3, wantEvents: 3},
		{name: "at bound", push: 4, wantEvents: 4},
		{name: "past bound drops all", push: 5, wantOverflow: true},
		{name: "fsnotify overflow error", push: 2, overflowErr: true, wantOverflow: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newEventQueue(4, nil)
			for range tt.push {
				q.push(fsnotify.Event{Name: "/r/f", Op: fsnotify.Write})
			}
			if tt.overflowErr {
				q.markOverflow()
			}
			select {
			case <-q.signal:
			default:
				t.Fatal("queue did not signal")
			}
			events, overflow := q.take()
			if len(events) != tt.wantEvents || overflow != tt.wantOverflow {
				t.Errorf("take = %d events, overflow %v; want %d, %v", len(events), overflow, tt.wantEvents, tt.wantOverflow)
			}
			if events, overflow := q.take(); len(events) != 0 || overflow {
				t.Error("second take was not empty")
			}
		})
	}
}

func TestWatchLimitReason(t *testing.T) {
	wrap := func(err error) error { return errors.Join(errors.New("watching /x"), err) }
	if _, ok := watchLimitReason(wrap(syscall.ENOSPC)); !ok {
		t.Error("ENOSPC not recognised")
	}
	if _, ok := watchLimitReason(wrap(syscall.EMFILE)); !ok {
		t.Error("EMFILE not recognised")
	}
	if _, ok := watchLimitReason(wrap(syscall.EACCES)); ok {
		t.Error("EACCES taken for a watch limit")
	}
}

// TestBatcherMaxWait drives the batcher alone: with a debounce of an hour
// only MaxWait can make the batch due, and a change every 10 ms re-arms the
// timer each time without pushing the batch past MaxWait after the first.
// A timer never fires early, so the batch cannot be due before MaxWait; how
// late it comes is the scheduler's, and only bounded by waitTimeout.
func TestBatcherMaxWait(t *testing.T) {
	const debounce, maxWait = time.Hour, 100 * time.Millisecond
	b := newBatcher(debounce, maxWait)
	begin := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	b.add("/r/f")
	for {
		select {
		case <-tick.C:
			b.add("/r/f")
			if time.Since(begin) > waitTimeout {
				t.Fatalf("batch not due %v after its first change under a continuous stream (MaxWait %v)", waitTimeout, maxWait)
			}
			continue
		case <-b.timerC():
			b.onTimer()
		}
		break
	}
	if waited := time.Since(begin); waited < maxWait {
		t.Errorf("batch due after %v, before MaxWait %v", waited, maxWait)
	}
	select {
	case got := <-b.out:
		if !slices.Equal(got.Paths, []string{"/r/f"}) || got.Rescan {
			t.Errorf("batch = %+v", got)
		}
	default:
		t.Fatal("no batch handed out")
	}
	// While a batch is in flight, the next one waits for onDelivered.
	b.markRescan()
	b.flushNow()
	select {
	case <-b.out:
		t.Fatal("second batch handed out while the first was in flight")
	default:
	}
	b.onDelivered()
	if got := <-b.out; !got.Rescan || len(got.Paths) != 0 {
		t.Errorf("rescan batch = %+v", got)
	}
	b.close()
}

// TestJoinName joins as filepath.Join does for clean directories and plain
// names, the filesystem root included.
func TestJoinName(t *testing.T) {
	sep := string(filepath.Separator)
	for _, dir := range []string{sep, sep + "a", sep + filepath.Join("a", "b c")} {
		for _, name := range []string{"x", "session.jsonl", "--p--", "é"} {
			if got, want := joinName(dir, name), filepath.Join(dir, name); got != want {
				t.Errorf("joinName(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
