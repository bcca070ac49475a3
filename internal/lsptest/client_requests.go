package lsptest

import (
	"encoding/json"
)

// answer replies to one server-to-client request: with the test's handler
// when it gave one, else with the default below, else MethodNotFound.
func (e *Editor) answer(m Message) {
	e.mu.Lock()
	h, ok := e.handlers[m.Method]
	e.mu.Unlock()
	if !ok {
		h, ok = e.defaultHandler(m.Method)
	}
	reply := map[string]any{"id": m.ID}
	switch {
	case !ok:
		reply["error"] = &Error{Code: CodeMethodNotFound, Message: m.Method + " is not supported by the test editor"}
	default:
		res, err := h(m.Params)
		if err != nil {
			if rpcErr, isRPC := err.(*Error); isRPC {
				reply["error"] = rpcErr
			} else {
				reply["error"] = &Error{Code: -32603, Message: err.Error()}
			}
		} else {
			reply["result"] = res
		}
	}
	// The server may have gone; its own test sees that through Done.
	_ = e.Send(reply)
}

// defaultHandler answers what an editor answers without asking the user:
// configuration from Config.Settings, progress creation, refreshes and
// (un)registrations with null, showDocument with success.
func (e *Editor) defaultHandler(method string) (Handler, bool) {
	switch method {
	case "workspace/configuration":
		return e.configuration, true
	case "window/workDoneProgress/create",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh",
		"workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"client/registerCapability", "client/unregisterCapability":
		return func(json.RawMessage) (any, error) { return nil, nil }, true
	case "window/showDocument":
		return func(json.RawMessage) (any, error) { return map[string]any{"success": true}, nil }, true
	}
	return nil, false
}

// configuration answers workspace/configuration item by item.
func (e *Editor) configuration(params json.RawMessage) (any, error) {
	var p struct {
		Items []struct {
			Section string `json:"section"`
		} `json:"items"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: -32602, Message: "configuration params: " + err.Error()}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]any, len(p.Items))
	for i, it := range p.Items {
		if it.Section == "" {
			out[i] = e.settings
			continue
		}
		out[i] = e.settings[it.Section]
	}
	return out, nil
}

// SetHandler answers the server's requests of method with h from now on
// (nil restores the default).
func (e *Editor) SetHandler(method string, h Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if h == nil {
		delete(e.handlers, method)
		return
	}
	e.handlers[method] = h
}

// Refuse makes the editor answer the server's requests of method with
// MethodNotFound, as a client without that feature does.
func (e *Editor) Refuse(method string) {
	e.SetHandler(method, func(json.RawMessage) (any, error) {
		return nil, &Error{Code: CodeMethodNotFound, Message: method + " is not supported"}
	})
}

// SetSettings replaces what workspace/configuration answers; the caller
// still sends workspace/didChangeConfiguration when the server should know.
func (e *Editor) SetSettings(settings map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settings = settings
}
