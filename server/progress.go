package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// progressReporter follows one index build and, once a client that can
// show work-done progress attaches, reports it. The build never waits for
// the client: it starts at initialize, and the report joins when the
// client's `initialized` arrives (servers may not send requests before
// that).
type progressReporter struct {
	s *Server

	// mu guards everything below.
	mu       sync.Mutex
	token    string // empty until attached
	done     int
	total    int
	finished bool
	lastSent time.Time
}

// newProgressReporter returns a reporter that is not attached yet.
func (s *Server) newProgressReporter() *progressReporter {
	return &progressReporter{s: s}
}

// attach creates a progress token on the client
// (window/workDoneProgress/create) and begins the report, unless the build
// already finished.
func (r *progressReporter) attach(ctx context.Context, token string) {
	r.mu.Lock()
	finished := r.finished
	r.mu.Unlock()
	if finished {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, outgoingCallTimeout)
	defer cancel()
	if err := protocol.Call(callCtx, r.s.conn, protocol.MethodWindowWorkDoneProgressCreate,
		workDoneProgressCreateParams{Token: token}, nil); err != nil {
		r.s.logger.Debug("client refused a progress token", zap.Error(err))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.token = token
	r.sendLocked(workDoneProgressValue{Kind: "begin", Title: "Indexing dsh sessions", Percentage: ptr(r.percentLocked())})
	if r.finished {
		// The build ended while the token was being created.
		r.sendLocked(workDoneProgressValue{Kind: "end", Message: "done"})
	}
}

func ptr[T any](v T) *T { return &v }

func (r *progressReporter) percentLocked() int {
	if r.total <= 0 {
		return 0
	}
	return r.done * 100 / r.total
}

// update records done of total and reports it, throttled, when attached.
func (r *progressReporter) update(done, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done, r.total = done, total
	if r.token == "" || total <= 0 {
		return
	}
	now := time.Now()
	if now.Sub(r.lastSent) < progressReportInterval && done < total {
		return
	}
	r.lastSent = now
	pct := r.percentLocked()
	r.sendLocked(workDoneProgressValue{Kind: "report", Message: fmt.Sprintf("%d/%d logs", done, total), Percentage: &pct})
}

// end finishes the report.
func (r *progressReporter) end(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = true
	if r.token == "" {
		return
	}
	msg := "done"
	if err != nil {
		msg = "failed: " + err.Error()
	}
	r.sendLocked(workDoneProgressValue{Kind: "end", Message: msg})
}

// sendLocked writes one $/progress; Notify only writes, so holding mu is
// fine and keeps the reports in order.
func (r *progressReporter) sendLocked(v workDoneProgressValue) {
	if err := r.s.conn.Notify(r.s.bgCtx, protocol.MethodProgress, progressParams{Token: r.token, Value: v}); err != nil {
		r.s.logger.Debug("progress not sent", zap.Error(err))
	}
}
