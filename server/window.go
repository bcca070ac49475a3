package server

import (
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// showMessage sends window/showMessage; it only writes, so it is safe from
// the read loop.
func (s *Server) showMessage(typ int, msg string) {
	if err := s.conn.Notify(s.bgCtx, protocol.MethodWindowShowMessage, showMessageParams{Type: typ, Message: msg}); err != nil {
		s.logger.Debug("showMessage not sent", zap.Error(err))
	}
}

// traceRequest sends $/logTrace for a handled request when the client
// turned tracing on.
func (s *Server) traceRequest(method string, start time.Time, err error) {
	s.traceMu.Lock()
	level := s.traceLevel
	s.traceMu.Unlock()
	if level != "messages" && level != "verbose" {
		return
	}
	p := logTraceParams{Message: fmt.Sprintf("handled %s in %s", method, time.Since(start).Round(time.Microsecond))}
	if level == "verbose" {
		if err != nil {
			p.Verbose = "error: " + err.Error()
		} else {
			p.Verbose = "ok"
		}
	}
	if nerr := s.conn.Notify(s.bgCtx, protocol.MethodLogTrace, p); nerr != nil {
		s.logger.Debug("logTrace not sent", zap.Error(nerr))
	}
}

// attachProgress shows the first index build as work-done progress, when
// the client supports it and the build is still running.
func (s *Server) attachProgress() {
	r := s.firstBuild.Load()
	if r == nil || !s.clientCaps().workDoneProgress {
		return
	}
	token := fmt.Sprintf("dsh-refls/index/%d", s.progressSeq.Add(1))
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		r.attach(s.bgCtx, token)
	}()
}

// setTrace records the trace level $/setTrace asks for.
func (s *Server) setTrace(params json.RawMessage) error {
	var p setTraceParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding setTrace: %w", err)
	}
	s.traceMu.Lock()
	s.traceLevel = p.Value
	s.traceMu.Unlock()
	return nil
}
