package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// progressBarWidth is the number of cells of the terminal progress bar.
const progressBarWidth = 30

// progressRedraw bounds how often the bar is redrawn, so a fast build over
// many small logs does not spend its time writing to the terminal.
const progressRedraw = 100 * time.Millisecond

// indexReport is what `dsh-refls index` prints: the index facts dsh/status
// reports for sessions.
type indexReport struct {
	Root         string           `json:"root"`
	Sessions     int              `json:"sessionsIndexed"`
	Skipped      []dshlog.Skipped `json:"skipped"`
	CachePath    string           `json:"cachePath,omitempty"`
	CacheLoaded  bool             `json:"cacheLoaded"`
	CacheProblem string           `json:"cacheProblem,omitempty"`
	BytesRead    int64            `json:"bytesRead"`
	LogsRead     int64            `json:"logsRead"`
	Millis       int64            `json:"buildMillis"`
}

// runIndex implements `dsh-refls index`: build or refresh the persisted
// title index from a terminal.
func runIndex(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("index", stderr, "usage: dsh-refls index [--sessions-root R] [--cache FILE] [--no-cache] [--quiet]\n\nBuilds or refreshes the session title index cache that the server starts from,\nshowing progress on stderr, then prints the index facts as JSON.")
	rootFlag := fs.String("sessions-root", "", "dsh sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)")
	cacheFlag := fs.String("cache", "", "index cache file (default: under the user cache dir)")
	noCache := fs.Bool("no-cache", false, "neither read nor write the cache")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return cliExitError
	}
	root, err := dshlog.ResolveRoot(*rootFlag)
	if err != nil {
		return failCLI(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ix := titles.NewIndex(root, titles.IndexOptions{})
	rep := indexReport{Root: root}
	if !*noCache {
		rep.CachePath = *cacheFlag
		if rep.CachePath == "" {
			if rep.CachePath, err = titles.DefaultCachePath(root); err != nil {
				return failCLI(stderr, err)
			}
		}
		if err := ix.LoadCache(rep.CachePath); err == nil {
			rep.CacheLoaded = true
		} else if !errors.Is(err, os.ErrNotExist) {
			rep.CacheProblem = err.Error()
		}
	}
	start := time.Now()
	bar := &progressBar{w: stderr, quiet: *quiet}
	err = ix.Build(ctx, bar.update)
	bar.finish()
	if err != nil {
		return failCLI(stderr, err)
	}
	rep.Millis = time.Since(start).Milliseconds()
	if rep.CachePath != "" {
		if err := ix.SaveCache(rep.CachePath); err != nil {
			return failCLI(stderr, err)
		}
	}
	snap := ix.Snapshot()
	rep.Sessions, rep.Skipped = len(snap.Sessions), snap.Skipped
	if rep.Skipped == nil {
		rep.Skipped = []dshlog.Skipped{}
	}
	rep.BytesRead, rep.LogsRead = ix.BytesRead(), ix.LogsRead()
	return printJSON(stdout, stderr, rep)
}

// progressBar draws "label [#####     ] done/total" on one terminal line.
type progressBar struct {
	w     io.Writer
	quiet bool
	// label names the work; "" is "indexing sessions".
	label string
	// erase makes finish blank the line instead of ending it, so that no
	// bar is left on the terminal.
	erase bool

	mu    sync.Mutex
	last  time.Time
	drawn int // the length of the line drawn, 0 before any
}

func (p *progressBar) update(done, total int) {
	if p.quiet || total == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < total && time.Since(p.last) < progressRedraw {
		return
	}
	p.last = time.Now()
	label := p.label
	if label == "" {
		label = "indexing sessions"
	}
	filled := min(done, total) * progressBarWidth / total
	line := fmt.Sprintf("%s [%s%s] %d/%d", label, strings.Repeat("#", filled), strings.Repeat(" ", progressBarWidth-filled), done, total)
	// Spaces cover what a longer line drawn before left.
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(0, p.drawn-len(line))))
	p.drawn = max(p.drawn, len(line))
}

// phase makes the bar show the next piece of work under label.
func (p *progressBar) phase(label string) func(done, total int) {
	p.mu.Lock()
	p.label, p.last = label, time.Time{}
	p.mu.Unlock()
	return p.update
}

func (p *progressBar) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.drawn == 0:
	case p.erase:
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.drawn))
	default:
		fmt.Fprintln(p.w)
	}
	p.drawn = 0
}
