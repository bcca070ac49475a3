package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/dsh-refls/dsh-refls/completion/frecency"
	"github.com/dsh-refls/dsh-refls/internal/userpath"
	"github.com/dsh-refls/dsh-refls/server"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
)

// version is set at link time (-ldflags "-X main.version=…"); otherwise the
// module version from the build info is used.
var version = ""

// usage is the text of --help.
const usage = `dsh-refls — @-mentions of files and dsh sessions for editors and hosts.

Usage:
  dsh-refls [serve] [flags]     run the language server on stdin/stdout (what an
                                editor starts; speaks LSP, logs to stderr)
  dsh-refls demo                show what the server does, on a sample store
  dsh-refls candidates [flags]  list sessions you could reference
  dsh-refls index [flags]       build the session index cache ahead of time
  dsh-refls prepare [flags]     turn a message with session mentions into the
                                readable message plus its snapshot context

Flags of serve:
  --sessions-root DIR   where dsh keeps session logs (default: $DSH_HOME/sessions,
                        else ~/.dsh/sessions); the editor may override it
  --watch MODE          keep the session index fresh: auto, fsnotify, poll, off
                        (default auto: fsnotify, falling back to polling)
  --log-file FILE       write the log to FILE instead of stderr
  --log-level LEVEL     debug, info, warn or error (default info)
  --rpc-trace FILE      write every JSON-RPC frame to FILE as JSON lines, which
                        LSP inspectors load
  --no-index-cache      do not load or save the session index cache (kept
                        under your user cache dir so restarts are fast)
  --version             print the version and exit
  --help                print this help and exit

Try it:  go run ./cmd/dsh-refls demo
`

// serveFlags are the parsed flags of the serve command.
type serveFlags struct {
	sessionsRoot string
	watch        string
	logFile      string
	logLevel     string
	rpcTrace     string
	noIndexCache bool
	version      bool
}

func parseServeFlags(args []string, stderr io.Writer) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet("dsh-refls", flag.ContinueOnError)
	// Errors are printed once, by the caller, with a pointer to --help.
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.sessionsRoot, "sessions-root", "", "")
	fs.StringVar(&f.watch, "watch", "auto", "")
	fs.StringVar(&f.logFile, "log-file", "", "")
	fs.StringVar(&f.logLevel, "log-level", "info", "")
	fs.StringVar(&f.rpcTrace, "rpc-trace", "", "")
	fs.BoolVar(&f.noIndexCache, "no-index-cache", false, "")
	fs.BoolVar(&f.version, "version", false, "")
	// LSP client libraries pass --stdio (what the server does anyway) and
	// --clientProcessId; both are accepted and need nothing more.
	fs.Bool("stdio", true, "")
	fs.String("clientProcessId", "", "")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	// An editor spawns the server with its arguments as written in its
	// configuration, with no shell to expand a ~ in them.
	for _, p := range []*string{&f.sessionsRoot, &f.logFile, &f.rpcTrace} {
		*p = userpath.Expand(*p)
	}
	switch f.watch {
	case "auto", "fsnotify", "poll", "off":
	default:
		return f, fmt.Errorf("--watch must be auto, fsnotify, poll or off, got %q", f.watch)
	}
	return f, nil
}

// versionString is the version printed by --version and reported to
// clients.
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// newLogger builds the zap logger: JSON lines to the log file, or console
// text to stderr. It never writes to stdout. The log file's directory is
// made when missing (a fresh account has no ~/.cache yet); a log file that
// still cannot be opened is not a reason to refuse to serve: the log goes
// to stderr, and fallback says why, for the caller to log first.
func newLogger(level, file string, stderr io.Writer) (logger *zap.Logger, closeLog func(), fallback string, err error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, "", fmt.Errorf("--log-level must be debug, info, warn or error, got %q", level)
	}
	if file != "" {
		out, err := openOutput(file, os.O_APPEND)
		if err == nil {
			enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
			logger := zap.New(zapcore.NewCore(enc, zapcore.AddSync(out), lvl))
			return logger, func() { _ = logger.Sync(); _ = out.Close() }, "", nil
		}
		fallback = fmt.Sprintf("logging to stderr: --log-file: %v", err)
	}
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.AddSync(stderr), lvl)
	return zap.New(core), func() {}, fallback, nil
}

// openOutput opens file for writing with flag (0600), making its
// directory (0700) first when it is missing: a fresh account has no
// ~/.cache yet.
func openOutput(file string, flag int) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("making the directory of %s: %w", file, err)
	}
	out, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|flag, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", file, err)
	}
	return out, nil
}

// stdio joins stdin and stdout into the connection's stream.
type stdio struct {
	io.Reader
	io.Writer
}

// Close closes stdin when it can be closed, which ends a blocked read.
func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// runServe runs the language server on stdin/stdout.
func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" || a == "help" {
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	f, err := parseServeFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "dsh-refls: %v\nRun dsh-refls --help for the commands and flags.\n", err)
		return 2
	}
	if f.version {
		fmt.Fprintf(stdout, "dsh-refls %s\n", versionString())
		return 0
	}
	// The server has no profiling endpoint, so the runtime's heap
	// profile (a sampled stack per 512 KiB allocated) is memory nobody
	// reads: 1.5 MiB at 100,000 sessions, inside the soft memory limit
	// the index builds run under (server/internal/memtune/gc.go), where it left the
	// collector that much less room.
	runtime.MemProfileRate = 0
	logger, closeLog, logFallback, err := newLogger(f.logLevel, f.logFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-refls: %v\n", err)
		return 2
	}
	defer closeLog()
	if logFallback != "" {
		logger.Warn(logFallback)
	}
	opts := server.Options{
		Logger:       logger,
		Version:      versionString(),
		SessionsRoot: f.sessionsRoot,
		Watch:        f.watch,
		OpenSessions: server.NewLiveSessionsFactory(!f.noIndexCache),
		OpenFiles:    server.NewFilerefFactory(logger.Named("files")),
		FrecencyPath: frecency.DefaultPath,
	}
	if !f.noIndexCache {
		opts.RecallPath = recall.DefaultPath
	}
	if f.rpcTrace != "" {
		// Like the log, a trace file that cannot be written is no reason
		// to refuse to serve.
		if trace, err := openOutput(f.rpcTrace, os.O_TRUNC); err != nil {
			logger.Warn("serving without --rpc-trace", zap.Error(err))
		} else {
			defer trace.Close()
			opts.Trace = trace
		}
	}
	if out, ok := stdout.(*os.File); ok {
		if size, err := growOutputPipe(out); err != nil {
			logger.Debug("output pipe left at its size", zap.Int("bytes", size), zap.Error(err))
		} else if size > 0 {
			logger.Debug("output pipe", zap.Int("bytes", size))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving on stdio", zap.String("version", opts.Version),
		zap.String("sessionsRoot", strings.TrimSpace(f.sessionsRoot)), zap.String("watch", f.watch))
	code, err := server.Serve(ctx, stdio{Reader: stdin, Writer: stdout}, opts)
	if err != nil {
		logger.Warn("connection ended with an error", zap.Error(err))
	}
	logger.Info("exiting", zap.Int("code", code))
	return code
}
