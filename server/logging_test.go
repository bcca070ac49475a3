package server

import (
	"context"
	"log/slog"
	"testing"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestSlogBridge(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	ctx := protocol.WithLogger(context.Background(), NewSlogLogger(zap.New(core)))
	logger := protocol.LoggerFromContext(ctx)

	logger.Debug("below the level")
	logger.With("conn", 7).WithGroup("rpc").Warn("slow request", "method", "textDocument/hover", "ms", 120)
	logger.Error("broken", "err", "boom")

	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2 (debug filtered): %+v", len(entries), entries)
	}
	warn := entries[0]
	if warn.Level != zapcore.WarnLevel || warn.Message != "slow request" {
		t.Errorf("first entry %v %q", warn.Level, warn.Message)
	}
	fields := warn.ContextMap()
	if fields["conn"] != int64(7) || fields["rpc.method"] != "textDocument/hover" || fields["rpc.ms"] != int64(120) {
		t.Errorf("fields = %v", fields)
	}
	if entries[1].Level != zapcore.ErrorLevel {
		t.Errorf("second entry level %v", entries[1].Level)
	}
	if !NewSlogLogger(zap.New(core)).Enabled(context.Background(), slog.LevelWarn) {
		t.Error("warn not enabled at info level")
	}
}
