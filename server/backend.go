package server

import (
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Sessions is what the server needs from the session side: the lifecycle
// of a title index kept fresh in the background, and its current snapshot.
// Every lookup of one request (mentions, candidates, previews, preparation)
// is answered by package sessionref from one snapshot, so a request never
// sees two states of the index. The production implementation wraps
// package sessionref/live (see liveSessions).
type Sessions interface {
	// Run restores, builds and then keeps the index fresh until ctx ends.
	Run(ctx context.Context) error
	// Ready is closed once the first build has finished, or Run stopped
	// before it could.
	Ready() <-chan struct{}
	// Restored is closed once a stored index has been restored, which
	// lists every session its last save knew; never closed without one.
	Restored() <-chan struct{}
	// Status describes the index as of now.
	Status() SessionStatus
	// Snapshot is the index as of now, an immutable value; never nil.
	Snapshot() *titles.Snapshot
}

// SessionsConfig is what the server asks of the session index it opens.
type SessionsConfig struct {
	// Root is the resolved sessions root.
	Root string
	// Watch is the watch mode: "auto", "fsnotify", "poll" or "off".
	Watch string
	// Logger receives the index's log.
	Logger *zap.Logger
	// Progress is called while the first build reads logs.
	Progress func(done, total int)
	// OnUpdate is called after the first build and after each change
	// applied to the index.
	OnUpdate func()
	// OnDegraded is called once when watching falls back to polling.
	OnDegraded func(reason string)
	// DuringRestore, when set, is called as the index starts restoring its
	// cache, and the func it returns when the restore ends.
	DuringRestore func() (done func())
	// Yield, when set, is called before each directory the index's watcher
	// attaches to and each log it reads, and may wait.
	Yield func(ctx context.Context)
}

// SessionsFactory opens the session index of one root; the server then
// runs it until the root changes or the connection ends.
type SessionsFactory func(cfg SessionsConfig) (Sessions, error)

// SessionStatus are the index facts dsh/status reports.
type SessionStatus struct {
	Root     string
	Sessions int
	Skipped  []dshlog.Skipped
	Updated  time.Time
	Building bool
	// WatchMode is the effective watch mode of the root.
	WatchMode string
	// Degraded says why watching fell back to polling, or is empty.
	Degraded string
	// Problem is the last build or refresh error, or empty.
	Problem string
	// UnknownEvents counts the events of v4 logs whose type is outside dsh
	// 0.2's vocabulary; they carry no surfaceOp and were skipped.
	UnknownEvents int
	// CacheLoaded says whether the index was restored from its cache
	// before the build.
	CacheLoaded bool
}

// PrepareResult is the dsh/prepare result.
type PrepareResult struct {
	Content           json.RawMessage         `json:"content"`
	References        []sessionref.Reference  `json:"references"`
	AdditionalContext *prepare.ContextMessage `json:"additionalContext,omitempty"`
	// Files are the file mentions of the message in mention order; the
	// message keeps them as written.
	Files []PreparedFile `json:"files"`
	// Views are the URIs of the documents that show the prepared message
	// and its context, when the params asked for them.
	Views *preparedViews `json:"views,omitempty"`
}

// FileCandidate is one workspace path offered for an `@` mention.
type FileCandidate struct {
	// Path is relative to the workspace root, with forward slashes.
	Path string
	Kind fileref.Kind
	// Ignored marks an entry listed only because the query named its
	// directory explicitly.
	Ignored bool
	// Score is the fuzzy score the search ordered by (higher is better),
	// which frecency re-orders within bands of (frecency.go).
	Score int
}

// Files is what the server needs from the workspace file index.
type Files interface {
	// Search answers a file query of §3; capped is true when limit cut it.
	Search(ctx context.Context, query string, limit int) (cands []FileCandidate, capped bool, err error)
	// Count is the number of indexed files.
	Count() int
	// Close stops any background work.
	Close() error
}

// FilesFactory opens the file index of a workspace root.
type FilesFactory func(ctx context.Context, root string, excluded []string) (Files, error)
