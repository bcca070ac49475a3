// Package server is the language server of dsh-refls: it speaks LSP and the
// dsh/* methods over one JSON-RPC connection and converts between protocol
// shapes and the values of packages sessionref, completion and the
// workspace file index. A Server holds the state of one connection.
package server

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
	"github.com/dsh-refls/dsh-refls/watch"
)

// Tuning constants.
const (
	// defaultDiagnosticsDelay debounces diagnostics per document: long enough
	// to skip the intermediate states of fast typing, short enough to feel
	// immediate.
	defaultDiagnosticsDelay = 150 * time.Millisecond
	// outgoingCallTimeout bounds server-to-client requests (progress
	// creation) so a client that never answers cannot stall anything.
	outgoingCallTimeout = 5 * time.Second
	// closeTimeout bounds the wait for the connection to close at exit.
	// Every answer has been written by then; what remains is a read blocked
	// on a stdin that closing cannot interrupt, so the wait is short.
	closeTimeout = 250 * time.Millisecond
	// progressReportInterval throttles $/progress reports while indexing.
	progressReportInterval = 200 * time.Millisecond
)

// ServerName is the name the server reports in initialize.
const ServerName = "dsh-refls"

// Options configure Serve. Zero values are usable: a nop logger, the
// default session root, no file index and no watcher.
type Options struct {
	// Logger receives the server's log; it never writes to the protocol
	// stream.
	Logger *zap.Logger
	// Version is reported in serverInfo.
	Version string
	// SessionsRoot is the --sessions-root flag; initializationOptions may
	// override it.
	SessionsRoot string
	// Watch is the --watch flag: "auto", "fsnotify", "poll" or "off".
	Watch string
	// OpenSessions opens the session index of a root. Nil uses
	// package sessionref/live without the index cache.
	OpenSessions SessionsFactory
	// OpenFiles opens the workspace file index. Nil lists directories
	// live with a bounded walk for other queries.
	OpenFiles FilesFactory
	// Trace, when set, receives the JSON-lines trace of every frame.
	Trace io.Writer
	// MaxConcurrency bounds the requests handled at once; 0 means the
	// number of CPUs (at least 2).
	MaxConcurrency int
	// DiagnosticsDelay overrides the diagnostics debounce.
	DiagnosticsDelay time.Duration
	// Now is the clock of relative ages (completion labelDetails, hover);
	// nil means time.Now.
	Now func() time.Time
	// RecallPath is where the recall index of a sessions root is stored
	// (recall.DefaultPath); nil keeps it in a temporary file only.
	RecallPath func(root string) (string, error)
	// FrecencyPath is where the picks of a workspace root are kept
	// (frecency.DefaultPath); nil keeps them in memory only.
	FrecencyPath func(root string) (string, error)
}

// lifecycle states of a connection.
type lifecycleState int

const (
	stateNew lifecycleState = iota
	stateInitialized
	stateShutdown
)

// clientCaps are what the client said it supports, fixed at initialize.
type clientCaps struct {
	encoding           PositionEncoding
	insertReplace      bool
	labelDetails       bool
	completionMarkdown bool
	hoverMarkdown      bool
	workDoneProgress   bool
	// watchedFiles is true when the client registers
	// workspace/didChangeWatchedFiles dynamically; it then reports
	// workspace changes and the server does not watch the workspace.
	watchedFiles bool
	// relativePatterns is true when the client takes RelativePattern
	// globs in file watchers.
	relativePatterns bool
	// features: code actions, inlay hints, workspace symbols.
	features featureCaps
	// client is the family of the client (its clientInfo name), which
	// decides what completion's filterText starts with.
	client completion.Client
}

// serverFeatures is the state of the editor features (inlay_hint.go).
type serverFeatures struct {
	hints inlayHintCache
}

// wire is what the server asks of its connection's stream besides the
// reading and writing jsonrpc2 does through it (lspwire.Stream).
type wire interface {
	// InputIdle reports whether no input waits after the frame just read;
	// only the read loop may ask.
	InputIdle() bool
	// WaitDrained waits, within a bound, until every call read has been
	// answered.
	WaitDrained()
	// Abort stops every wait for answers: the server is going away.
	Abort()
	// Hold keeps an answer and returns the placeholder jsonrpc2 carries in
	// its place (lspwire.Stream.Hold).
	Hold(a lspwire.Answer) json.RawMessage
}

// activity is what the server tells the memory releaser
// (memtune.Releaser).
type activity interface {
	// Begin and End enclose the handling of a message or another piece
	// of work; no release runs while one is under way.
	Begin()
	End()
	// Touch records activity: a release waits for the server to be quiet.
	Touch()
	// Stop ends the releaser with the connection.
	Stop()
}

// gcPolicy is what the server asks of the collector while its indexes
// build (memtune.GC, one for the process). Each call returns the func
// that gives back what it took; call that once.
type gcPolicy interface {
	// Lower lowers the collector's target to percent.
	Lower(percent int) (restore func())
	// LowerWithLimit is Lower with the soft memory limit too.
	LowerWithLimit(percent int) (restore func())
	// HoldLimit holds the soft memory limit alone.
	HoldLimit() (release func())
	// Pause turns the collector off, the memory limit held.
	Pause() (resume func())
}

// Server holds the server-side state of one client connection.
type Server struct {
	// features holds the inlay hint cache and refresh state.
	features serverFeatures
	// answers lends the arrays typing's answers are encoded into.
	answers lspwire.AnswerBuffers
	// kept holds the views of the latest prepared messages, served as
	// documents (document_content.go).
	kept keptViews
	// frec is what was accepted from completion lists (frecency.go).
	frec   frecencyState
	opts   Options
	logger *zap.Logger
	conn   jsonrpc2.Conn
	stream wire
	sem    chan struct{}
	docs   *documents
	diags  *diagnostics
	// memory hears of the server's work, to return memory to the OS once
	// it goes quiet; gc holds the collector's target and limit while the
	// indexes build (memtune).
	memory activity
	gc     gcPolicy

	// cancels holds the cancel func of every call being handled
	// ($/cancelRequest, cancel.go).
	cancels cancels

	// bgCtx ends when the connection ends; background work uses it.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	// lifeMu guards state, exitCode and exited.
	lifeMu   sync.Mutex
	state    lifecycleState
	exited   chan struct{}
	exitCode int

	// caps and workspaceRoot are set once by initialize,
	// before the lifecycle state becomes stateInitialized, and read without
	// locks afterwards: every reader is a request or notification admitted
	// after it saw that state under lifeMu, or a goroutine started after the
	// write, so the write happens before every read.
	caps          clientCaps
	workspaceRoot string

	// cfgMu guards cfg, the effective configuration, and configErr, why the
	// last settings the client sent were rejected (empty when they were
	// not).
	cfgMu     sync.Mutex
	cfg       Config
	configErr string

	// traceMu guards traceLevel, the $/setTrace value.
	traceMu    sync.Mutex
	traceLevel string

	// workspaceWatcher is the workspace watcher once it watches, for
	// dsh/status. An atomic: the watch goroutine sets it, status reads it.
	workspaceWatcher atomic.Pointer[watch.Watcher]

	// sizing is set while file sizes are measured (kickSizes).
	sizing atomic.Bool

	// filesMu serialises publishing a built workspace index with the
	// workspace changes that arrive meanwhile: pendingChanges holds what
	// the client reported while the index was building (pendingOverflow
	// when there was too much to keep), and clientWatches says whether the
	// client watches the workspace for us.
	filesMu         sync.Mutex
	pendingChanges  []string
	pendingOverflow bool
	clientWatches   bool

	// These are atomics: read by every request, replaced only when the
	// configuration names another root.
	sessions atomic.Pointer[sessionsHolder]
	files    atomic.Pointer[filesHolder]
	// recall is the body search index of the current sessions, nil when
	// recallSearch is off (server/recall.go).
	recall atomic.Pointer[recallHolder]
	// requests counts the messages being handled, which a recall build
	// gives way to (recall.go).
	requests requestActivity
	// answering counts the calls running (each holding a slot of sem)
	// until their answers are written, which the session index's attach
	// and build give way to (see finish).
	answering requestActivity

	progressSeq atomic.Int64
	// firstBuild is the progress of the first session index build, which
	// the client sees as work-done progress.
	firstBuild atomic.Pointer[progressReporter]
}

// sessionsHolder is one opened session index with the watch mode it was
// opened with and the context of its background work (build, watch),
// cancelled when it is replaced.
type sessionsHolder struct {
	s      Sessions
	watch  string
	ctx    context.Context
	cancel context.CancelFunc
	// stopped is closed when Run returned: the index's watcher is closed.
	stopped chan struct{}
	// replaced is closed once the holder that replaces this one is
	// current (or opening it failed).
	replaced chan struct{}
}

// filesHolder is the current workspace file source with the context of
// its background work (build, watch), cancelled when it is replaced.
type filesHolder struct {
	f Files
	// building is true while f is the interim live lister and the
	// workspace index is still being built.
	building bool
	root     string
	cfg      Config
	ctx      context.Context
	cancel   context.CancelFunc
}

// now is the server's clock.
func (s *Server) now() time.Time { return s.opts.Now() }
