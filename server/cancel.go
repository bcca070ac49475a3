package server

import (
	"context"
	"fmt"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// cancels is the $/cancelRequest side of the connection: the cancel func
// of every call being handled, by id.
//
// It stands in for protocol.CancelHandler, which derives each call's
// context with context.WithCancel from jsonrpc2's request context. That
// context is a type package context does not know, so every derivation
// started a goroutine to watch it, and the call's end woke that goroutine
// again: two scheduler hand-offs per request, on every keystroke, for a
// cancellation the server can give without them (requestContext).
type cancels struct {
	mu   sync.Mutex
	byID map[jsonrpc2.ID]context.CancelFunc
}

// requestContext is the context a call is handled with. Its cancellation
// is its own, a child of the connection's context (which package context
// knows, so nothing watches it); its values are those of jsonrpc2's request
// context too, which holds the release token of jsonrpc2.Async.
type requestContext struct {
	context.Context
	request context.Context
}

// Value implements context.Context: the cancellation's own values first
// (so a context derived from this one is a child of its cancellation, not
// watched by a goroutine), then the request's.
func (c requestContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.request.Value(key)
}

// cancelHandler wraps h with $/cancelRequest: each call runs with a
// requestContext that the notification, a failed write (cancelAll) or the
// end of the connection cancels. A malformed $/cancelRequest is a parse
// error, as protocol.CancelHandler reports it (keepServing logs it).
func (s *Server) cancelHandler(connCtx context.Context, h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() == protocol.MethodCancelRequest {
			return nil, s.cancels.cancelRequest(req.Params())
		}
		if !req.IsCall() {
			return h(ctx, req)
		}
		id := req.ID()
		cctx, cancel := context.WithCancel(connCtx)
		s.cancels.add(id, cancel)
		defer func() {
			s.cancels.remove(id)
			cancel()
		}()
		return h(requestContext{Context: cctx, request: ctx}, req)
	}
}

// cancelRequest cancels the call that the params of a $/cancelRequest name;
// an id not being handled is no error.
func (c *cancels) cancelRequest(params []byte) error {
	var p protocol.CancelParams
	if err := protocol.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("%w: %w", jsonrpc2.ErrParse, err)
	}
	var id jsonrpc2.ID
	switch v := p.ID.(type) {
	case protocol.Integer:
		id = jsonrpc2.NewNumberID(int64(v))
	case protocol.String:
		id = jsonrpc2.NewStringID(string(v))
	default:
		return fmt.Errorf("%w: malformed cancel id %v", jsonrpc2.ErrParse, p.ID)
	}
	c.mu.Lock()
	cancel := c.byID[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

func (c *cancels) add(id jsonrpc2.ID, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = make(map[jsonrpc2.ID]context.CancelFunc)
	}
	c.byID[id] = cancel
}

func (c *cancels) remove(id jsonrpc2.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
}

// cancelAll cancels every call being handled: their answers can no longer
// be written.
func (c *cancels) cancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.byID {
		cancel()
	}
}
