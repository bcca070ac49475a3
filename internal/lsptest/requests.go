package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
)

// Initialize sends initialize with the Config's capabilities, options and
// root, decodes the answer into result (which may be nil), takes the
// position encoding the server chose, and sends initialized.
func (e *Editor) Initialize(ctx context.Context, result any) error {
	caps := e.cfg.Capabilities
	if caps == nil {
		caps = map[string]any{}
	}
	params := map[string]any{"processId": nil, "capabilities": caps, "initializationOptions": e.cfg.InitializationOptions}
	if e.cfg.RootURI != "" {
		params["rootUri"] = e.cfg.RootURI
	}
	var raw json.RawMessage
	if err := e.Call(ctx, "initialize", params, &raw); err != nil {
		return err
	}
	var negotiated struct {
		Capabilities struct {
			PositionEncoding Encoding `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &negotiated); err != nil {
		return fmt.Errorf("initialize result %.200s: %w", raw, err)
	}
	if enc := negotiated.Capabilities.PositionEncoding; enc == UTF8 || enc == UTF16 {
		e.mu.Lock()
		e.encoding = enc
		e.mu.Unlock()
	}
	if result != nil {
		if err := (Message{Result: raw}).DecodeResult(result); err != nil {
			return err
		}
	}
	return e.Notify(ctx, "initialized", map[string]any{})
}

// Shutdown sends shutdown, then exit.
func (e *Editor) Shutdown(ctx context.Context) error {
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return e.Notify(ctx, "exit", nil)
}

// at is the params of a request at one position of a document.
func at(uri string, pos Position) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}
}

// Completion asks textDocument/completion at pos of uri.
func (e *Editor) Completion(ctx context.Context, uri string, pos Position, result any) error {
	return e.Call(ctx, "textDocument/completion", at(uri, pos), result)
}

// ResolveCompletion sends completionItem/resolve for item.
func (e *Editor) ResolveCompletion(ctx context.Context, item, result any) error {
	return e.Call(ctx, "completionItem/resolve", item, result)
}

// Hover asks textDocument/hover at pos of uri.
func (e *Editor) Hover(ctx context.Context, uri string, pos Position, result any) error {
	return e.Call(ctx, "textDocument/hover", at(uri, pos), result)
}

// Definition asks textDocument/definition at pos of uri.
func (e *Editor) Definition(ctx context.Context, uri string, pos Position, result any) error {
	return e.Call(ctx, "textDocument/definition", at(uri, pos), result)
}

// CodeAction asks textDocument/codeAction for rng of uri with the given
// context (nil sends no diagnostics).
func (e *Editor) CodeAction(ctx context.Context, uri string, rng Range, actionContext, result any) error {
	if actionContext == nil {
		actionContext = map[string]any{"diagnostics": []any{}}
	}
	return e.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng, "context": actionContext}, result)
}

// The dsh-refls methods beyond LSP (SPEC §4).
const (
	MethodPrepare = "dsh/prepare"
	MethodStatus  = "dsh/status"
)

// Prepare sends dsh/prepare with params.
func (e *Editor) Prepare(ctx context.Context, params, result any) error {
	return e.Call(ctx, MethodPrepare, params, result)
}

// Status sends dsh/status. Since the server answers in order of arrival
// on one connection, its answer also says that every message the editor
// sent before was read.
func (e *Editor) Status(ctx context.Context, result any) error {
	return e.Call(ctx, MethodStatus, map[string]any{}, result)
}
