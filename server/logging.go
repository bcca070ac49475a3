package server

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHandler is a log/slog handler that writes to a zap logger, so the
// protocol library's slog records end up in the same log as the server's.
type zapHandler struct {
	logger *zap.Logger
	attrs  []zap.Field
	group  string
}

// NewSlogLogger returns a *slog.Logger that forwards to logger.
func NewSlogLogger(logger *zap.Logger) *slog.Logger {
	return slog.New(&zapHandler{logger: logger.WithOptions(zap.AddCallerSkip(3))})
}

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		return zapcore.InfoLevel
	default:
		return zapcore.DebugLevel
	}
}

// Enabled implements slog.Handler.
func (h *zapHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.logger.Core().Enabled(zapLevel(l))
}

// Handle implements slog.Handler.
func (h *zapHandler) Handle(_ context.Context, r slog.Record) error {
	fields := append([]zap.Field(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, h.field(a))
		return true
	})
	if ce := h.logger.Check(zapLevel(r.Level), r.Message); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

func (h *zapHandler) field(a slog.Attr) zap.Field {
	key := a.Key
	if h.group != "" {
		key = h.group + "." + key
	}
	return zap.Any(key, a.Value.Resolve().Any())
}

// WithAttrs implements slog.Handler.
func (h *zapHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]zap.Field(nil), h.attrs...)
	for _, a := range attrs {
		n.attrs = append(n.attrs, h.field(a))
	}
	return &n
}

// WithGroup implements slog.Handler.
func (h *zapHandler) WithGroup(name string) slog.Handler {
	n := *h
	if n.group != "" {
		name = n.group + "." + name
	}
	n.group = name
	return &n
}
