package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// The read-only documents of the dsh-refls: scheme, served to a client
// that declares LSP 3.18's workspace/textDocumentContent (VS Code through
// vscode-languageclient 10+): a session's recall preview
// (dsh-refls:/session/…, the target of go to definition and document
// links), the index status, and the views of a prepared message. The
// client shows them read-only and never saves them; the server never
// diagnoses them (diagnosable). Other clients keep their own views.
const (
	statusDocumentPath = "/status/Index status.md"
	preparedPathPrefix = "/prepared/"
	// preparedMessageName and preparedContextName name the two views of
	// one prepared message: the message as it will be sent, and the text
	// of its context message.
	preparedMessageName = "Prepared message.md"
	preparedContextName = "Referenced sessions.md"
	// keptPreparedViews is how many prepared messages keep their views;
	// an older one's views say they are gone.
	keptPreparedViews = 20
)

// goneViewText is the text of a prepared view no longer kept.
const goneViewText = "# This view is gone\n\nPrepare the message again to show it.\n"

type textDocumentContentParams struct {
	URI string `json:"uri"`
}

type textDocumentContentResult struct {
	Text string `json:"text"`
}

type textDocumentContentOptions struct {
	Schemes []string `json:"schemes"`
}

// workspaceServerCapabilities are the workspace capabilities of the
// server.
type workspaceServerCapabilities struct {
	TextDocumentContent *textDocumentContentOptions `json:"textDocumentContent,omitempty"`
}

// preparedViews are the document URIs of one prepared message, returned by
// dsh/prepare when asked for with "views": true.
type preparedViews struct {
	Message string `json:"message"`
	// Context is absent when the message mentions no session.
	Context string `json:"context,omitempty"`
}

// keptViews holds the texts of the views of the latest prepared messages,
// at most keptPreparedViews of them.
type keptViews struct {
	mu    sync.Mutex
	n     int
	texts map[string]string // by URI path
	order [][]string        // the paths of each kept message, oldest first
}

// keep stores the views of one prepared message and returns their URIs.
func (k *keptViews) keep(message string, context *string) preparedViews {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.texts == nil {
		k.texts = map[string]string{}
	}
	k.n++
	dir := preparedPathPrefix + strconv.Itoa(k.n) + "/"
	paths := []string{dir + preparedMessageName}
	k.texts[paths[0]] = message
	views := preparedViews{Message: viewURI(paths[0])}
	if context != nil {
		paths = append(paths, dir+preparedContextName)
		k.texts[paths[1]] = *context
		views.Context = viewURI(paths[1])
	}
	k.order = append(k.order, paths)
	for len(k.order) > keptPreparedViews {
		for _, p := range k.order[0] {
			delete(k.texts, p)
		}
		k.order = k.order[1:]
	}
	return views
}

// text is the kept text at path, or a note that it is gone.
func (k *keptViews) text(path string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.texts[path]; ok {
		return t
	}
	return goneViewText
}

// viewURI is the dsh-refls: URI of the document at path.
func viewURI(path string) string {
	u := url.URL{Scheme: PreviewScheme, Path: path, OmitHost: true}
	return u.String()
}

func (s *Server) textDocumentContentCall(params json.RawMessage) (call, error) {
	var p textDocumentContentParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodWorkspaceTextDocumentContent, err)
	}
	u, err := url.Parse(p.URI)
	if err != nil || u.Scheme != PreviewScheme {
		return nil, invalidParams(protocol.MethodWorkspaceTextDocumentContent, fmt.Errorf("%q is not a %s: document", p.URI, PreviewScheme))
	}
	switch {
	case strings.HasPrefix(u.Path, previewPathPrefix):
		id, err := sessionOfURI(p.URI)
		if err != nil {
			return nil, err
		}
		seq, at, hasSeq, err := messageOfPreviewURI(p.URI)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			snap, err := s.readySnapshot(ctx)
			if err != nil {
				return nil, err
			}
			if snap == nil {
				return nil, sessionref.Errorf(sessionref.CodeReadFailed, "no session index is open")
			}
			d, err := s.renderPreview(ctx, snap, id, previewMessage{seq: seq, at: at, ok: hasSeq})
			if err != nil || ctx.Err() != nil {
				return nil, cmp.Or(err, ctx.Err())
			}
			return textDocumentContentResult{Text: d.text}, nil
		}, nil
	case u.Path == statusDocumentPath:
		return func(context.Context) (any, error) {
			text, err := render.StatusMarkdown(s.status())
			return textDocumentContentResult{Text: text}, err
		}, nil
	case strings.HasPrefix(u.Path, preparedPathPrefix):
		return func(context.Context) (any, error) {
			return textDocumentContentResult{Text: s.kept.text(u.Path)}, nil
		}, nil
	}
	return nil, invalidParams(protocol.MethodWorkspaceTextDocumentContent, fmt.Errorf("%s names no document of the server", p.URI))
}

// preparedViewTexts are the texts of a prepared message's two views: the
// message as it will be sent (the text of its content) and the text of
// its context message, nil without one.
func preparedViewTexts(r *PrepareResult) (string, *string, error) {
	var message string
	var text string
	if err := json.Unmarshal(r.Content, &text); err == nil {
		message = text
	} else {
		var blocks []prepare.ContentBlock
		if err := json.Unmarshal(r.Content, &blocks); err != nil {
			return "", nil, fmt.Errorf("reading the prepared content: %w", err)
		}
		var texts []string
		for _, bl := range blocks {
			if bl.Type == "text" {
				texts = append(texts, bl.Text)
			}
		}
		message = strings.Join(texts, "\n")
	}
	if r.AdditionalContext == nil || len(r.AdditionalContext.Content) == 0 {
		return message, nil, nil
	}
	return message, &r.AdditionalContext.Content[0].Text, nil
}
