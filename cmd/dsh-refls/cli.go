package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// cliExitError is the exit status of a command-line failure (§2.4 errors
// and usage errors alike), so scripts can tell it from success.
const cliExitError = 2

// cliError is the JSON object a failing command prints on stderr.
type cliError struct {
	Code      sessionref.Code `json:"code,omitempty"`
	Message   string          `json:"message"`
	SessionID string          `json:"sessionId,omitempty"`
}

// failCLI prints err as one JSON object on stderr and returns the exit status.
func failCLI(stderr io.Writer, err error) int {
	out := cliError{Message: err.Error()}
	var e *sessionref.Error
	if errors.As(err, &e) {
		out = cliError{Code: e.Code, Message: e.Message, SessionID: e.SessionID}
		if e.Err != nil {
			out.Message += ": " + e.Err.Error()
		}
	}
	raw, _ := json.Marshal(out)
	fmt.Fprintln(stderr, string(raw))
	return cliExitError
}

// printJSON writes v as indented JavaScript-compatible JSON.
func printJSON(stdout, stderr io.Writer, v any) int {
	raw, err := sessionref.MarshalJSIndent(v)
	if err != nil {
		return failCLI(stderr, fmt.Errorf("serialising the result: %w", err))
	}
	fmt.Fprintln(stdout, string(raw))
	return 0
}

// openIndex resolves the sessions root and builds the title index.
func openIndex(ctx context.Context, rootFlag string) (*titles.Index, error) {
	return openIndexWithProgress(ctx, rootFlag, nil)
}

// openIndexWithProgress is openIndex telling progress (nil: no one) how
// the build goes.
func openIndexWithProgress(ctx context.Context, rootFlag string, progress func(done, total int)) (*titles.Index, error) {
	root, err := dshlog.ResolveRoot(rootFlag)
	if err != nil {
		return nil, &sessionref.Error{Code: sessionref.CodeInvalidConfig, Message: "sessions root", Err: err}
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(ctx, progress); err != nil {
		return nil, &sessionref.Error{Code: sessionref.CodeReadFailed, Message: "indexing " + root, Err: err}
	}
	return ix, nil
}

func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// runCandidates implements `dsh-refls candidates`: the §2.2 candidate array.
func runCandidates(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("candidates", stderr, "usage: dsh-refls candidates [--query Q] [--session TARGET] [--cwd DIR] [--limit N] [--sessions-root R]\n\nPrints the sessions a message may reference, best first, as a JSON array.")
	query := fs.String("query", "", "case-insensitive text to find in id, cwd, title or display title")
	target := fs.String("session", "", "the session the message is written in (never offered)")
	cwd := fs.String("cwd", "", "the workspace the message is written in, when the session is not indexed (default: current directory)")
	limit := fs.Int("limit", titles.DefaultCandidateLimit, "the most candidates to print")
	rootFlag := fs.String("sessions-root", "", "dsh sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)")
	if err := fs.Parse(args); err != nil {
		return cliExitError
	}
	if fs.NArg() > 0 {
		return failCLI(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ix, err := openIndex(ctx, *rootFlag)
	if err != nil {
		return failCLI(stderr, err)
	}
	targetCwd := *cwd
	if targetCwd == "" {
		if wd, err := os.Getwd(); err == nil {
			targetCwd = wd
		}
	} else if abs, err := filepath.Abs(targetCwd); err == nil {
		targetCwd = abs
	}
	if *limit <= 0 {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidReference, "--limit must be positive, got %d", *limit))
	}
	cands, _, err := ix.Snapshot().Candidates(titles.CandidateQuery{Query: *query, TargetID: *target, TargetCwd: targetCwd, Limit: *limit})
	if err != nil {
		return failCLI(stderr, err)
	}
	if cands == nil {
		cands = []titles.Candidate{}
	}
	return printJSON(stdout, stderr, cands)
}

// runPrepare implements `dsh-refls prepare`: the §4.3 result
// {content, references, additionalContext?}.
func runPrepare(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("prepare", stderr, "usage: dsh-refls prepare --session TARGET (--text T | --file F) [--mode replace|preserve]\n         [--max-reference-bytes N] [--context-window TOKENS] [--sessions-root R] [--spill-dir D] [--redact-secrets]\n\nPrepares a message that mentions sessions: prints {content, references, additionalContext?} as JSON.")
	target := fs.String("session", "", "the session the message is written in (required)")
	text := fs.String("text", "", "the message text")
	file := fs.String("file", "", "read the message text from this file (- for stdin)")
	mode := fs.String("mode", string(prepare.ModeReplace), "replace: rewrite mentions to @label; preserve: keep the text as written")
	maxBytes := fs.Int("max-reference-bytes", 0, "byte budget per referenced session (default 65536, or from --context-window)")
	window := fs.Int("context-window", 0, "the model's context window in tokens; a source may take 20% of it")
	rootFlag := fs.String("sessions-root", "", "dsh sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)")
	spillDir := fs.String("spill-dir", defaultSpillDir(), "where full snapshots of shortened sessions are saved (empty: not saved)")
	redact := fs.Bool("redact-secrets", false, "replace recognised credentials in recalled text by [redacted: <kind>] (the redactSecrets setting)")
	if err := fs.Parse(args); err != nil {
		return cliExitError
	}
	if fs.NArg() > 0 {
		return failCLI(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *target == "" {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidConfig, "--session names the session the message is written in and is required"))
	}
	if (*text == "") == (*file == "") {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidConfig, "give exactly one of --text and --file"))
	}
	if *maxBytes < 0 || *window < 0 {
		return failCLI(stderr, sessionref.Errorf(sessionref.CodeInvalidConfig, "--max-reference-bytes and --context-window must be positive"))
	}
	message := *text
	if *file != "" {
		var raw []byte
		var err error
		if *file == "-" {
			raw, err = io.ReadAll(os.Stdin)
		} else {
			raw, err = os.ReadFile(*file)
		}
		if err != nil {
			return failCLI(stderr, fmt.Errorf("reading the message: %w", err))
		}
		message = string(raw)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ix, err := openIndex(ctx, *rootFlag)
	if err != nil {
		return failCLI(stderr, err)
	}
	lim := prepare.Limits{MaxReferenceBytes: *maxBytes, ContextWindow: *window, SpillDir: *spillDir, RedactSecrets: *redact}
	res, err := prepare.PrepareText(ctx, ix.Snapshot(), *target, message, prepare.Mode(*mode), nil, lim)
	if err != nil {
		return failCLI(stderr, err)
	}
	return printJSON(stdout, stderr, res)
}

// defaultSpillDir is the user cache dir + dsh-refls/spill (§2.3.9), or ""
// when the platform has no cache dir.
func defaultSpillDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "dsh-refls", "spill")
}
