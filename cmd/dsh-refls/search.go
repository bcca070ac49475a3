package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
)

// searchHit is one session of `dsh-refls search`, shaped as dsh/search
// answers it.
type searchHit struct {
	SessionID    string         `json:"sessionId"`
	Label        string         `json:"label"`
	DisplayTitle string         `json:"displayTitle"`
	Cwd          *string        `json:"cwd,omitempty"`
	CreatedAt    int64          `json:"createdAt"`
	Matches      []recall.Match `json:"matches"`
}

// runSearch implements `dsh-refls search QUERY`: the sessions whose
// projected text holds every word and quoted phrase of QUERY.
func runSearch(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("search", stderr, "usage: dsh-refls search [--limit N] [--session ID] [--sessions-root R] [--quiet] QUERY...\n\nPrints the sessions where every word (and \"quoted phrase\") of QUERY was said, newest first, as a JSON array.\nWhile the indexes build, a progress bar is drawn on stderr when it is a terminal.")
	limit := fs.Int("limit", recall.DefaultLimit, "the most sessions to print")
	session := fs.String("session", "", "search this session only")
	rootFlag := fs.String("sessions-root", "", "dsh sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)")
	quiet := fs.Bool("quiet", false, "no progress bar on stderr (there is none unless stderr is a terminal)")
	if err := fs.Parse(args); err != nil {
		return cliExitError
	}
	if *limit <= 0 || *limit > recall.MaxLimit {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidReference, "--limit must be from 1 to %d, got %d", recall.MaxLimit, *limit))
	}
	query := strings.Join(fs.Args(), " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A bad query is refused before anything is read.
	probe := recall.New(recall.Options{})
	if _, err := probe.Search(ctx, recall.Query{Text: query}); err != nil {
		return failSearch(stderr, err)
	}
	// While the indexes build, a bar on stderr when it is a terminal;
	// nothing otherwise, so that a script reading stderr gets only the
	// one JSON error object of a failure. stdout carries only the result.
	bar := &progressBar{w: stderr, quiet: *quiet || !isTerminal(stderr), erase: true}
	ix, err := openIndexWithProgress(ctx, *rootFlag, bar.phase("indexing sessions"))
	if err != nil {
		bar.finish()
		return failCLI(stderr, err)
	}
	snap := ix.Snapshot()
	rc := recall.New(recall.Options{Progress: bar.phase("reading what was said")})
	defer rc.Close() // removes its temporary text file
	err = rc.Sync(ctx, snap)
	bar.finish()
	if err != nil {
		return failCLI(stderr, &sessionref.Error{Code: sessionref.CodeReadFailed, Message: "indexing what was said in " + snap.Root, Err: err})
	}
	res, err := rc.Search(ctx, recall.Query{Text: query, Limit: *limit, SessionID: *session})
	if err != nil {
		return failSearch(stderr, err)
	}
	out := []searchHit{}
	for _, r := range res {
		e, ok := snap.Locate(r.SessionID)
		if !ok {
			continue
		}
		h := searchHit{SessionID: e.ID, Label: e.Label(), DisplayTitle: e.DisplayTitle(), CreatedAt: e.CreatedAt, Matches: r.Matches}
		if e.HasCwd {
			cwd := e.Cwd
			h.Cwd = &cwd
		}
		out = append(out, h)
	}
	// encoding/json writes <, > and & as \u escapes: excerpts stay
	// tag-safe wherever the output is pasted.
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return failCLI(stderr, fmt.Errorf("serialising the result: %w", err))
	}
	fmt.Fprintln(stdout, string(raw))
	return 0
}

// failSearch reports a refused query as INVALID_REFERENCE, as dsh/search does.
func failSearch(stderr io.Writer, err error) int {
	var qe *recall.QueryError
	if errors.As(err, &qe) {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidReference, "%s", qe.Reason))
	}
	return failCLI(stderr, fmt.Errorf("searching: %w", err))
}

// isTerminal reports whether w is a terminal (a character device: a tty
// or console; the null device counts too, which only discards the bar).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
