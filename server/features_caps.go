package server

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"
)

// featureCaps are the client capabilities of the editor features beyond
// completion and hover; a feature is advertised only when the client
// declares it.
type featureCaps struct {
	// codeActionLiterals: the client takes CodeAction literals.
	codeActionLiterals bool
	// showDocument: the client opens a URI on window/showDocument.
	showDocument bool
	// inlayHints and inlayHintRefresh: textDocument/inlayHint and
	// workspace/inlayHint/refresh.
	inlayHints       bool
	inlayHintRefresh bool
	// workspaceSymbols: workspace/symbol.
	workspaceSymbols bool
	// documentContent: workspace/textDocumentContent (LSP 3.18).
	documentContent bool
	// opensPrompts: the client opens the prompt CommandContinueFrom
	// answers (experimental dshContinueFrom).
	opensPrompts bool
}

// parseFeatureCaps reads the feature capabilities from initialize params.
func parseFeatureCaps(params json.RawMessage) featureCaps {
	var p struct {
		Capabilities struct {
			TextDocument struct {
				CodeAction *struct {
					CodeActionLiteralSupport json.RawMessage `json:"codeActionLiteralSupport"`
				} `json:"codeAction"`
				InlayHint json.RawMessage `json:"inlayHint"`
			} `json:"textDocument"`
			Workspace struct {
				Symbol              json.RawMessage `json:"symbol"`
				TextDocumentContent json.RawMessage `json:"textDocumentContent"`
				InlayHint           *struct {
					RefreshSupport bool `json:"refreshSupport"`
				} `json:"inlayHint"`
			} `json:"workspace"`
			Window struct {
				ShowDocument *struct {
					Support bool `json:"support"`
				} `json:"showDocument"`
			} `json:"window"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return featureCaps{}
	}
	c := p.Capabilities
	var f featureCaps
	f.codeActionLiterals = c.TextDocument.CodeAction != nil && present(c.TextDocument.CodeAction.CodeActionLiteralSupport)
	f.showDocument = c.Window.ShowDocument != nil && c.Window.ShowDocument.Support
	f.inlayHints = present(c.TextDocument.InlayHint)
	f.inlayHintRefresh = c.Workspace.InlayHint != nil && c.Workspace.InlayHint.RefreshSupport
	f.workspaceSymbols = present(c.Workspace.Symbol)
	f.documentContent = present(c.Workspace.TextDocumentContent)
	f.opensPrompts = opensPrompts(params)
	return f
}

// advertiseFeatures sets the server capabilities of the features the
// client supports.
func advertiseFeatures(f featureCaps, caps *serverCapabilities) {
	caps.WorkspaceSymbolProvider = f.workspaceSymbols
	if f.documentContent {
		caps.Workspace = &workspaceServerCapabilities{TextDocumentContent: &textDocumentContentOptions{Schemes: []string{PreviewScheme}}}
	}
	if f.inlayHints {
		caps.InlayHintProvider = &inlayHintOptions{}
	}
	// Every client gets the frecency commands: the items carry the first,
	// and clients register a handler only for announced commands.
	caps.ExecuteCommandProvider = &executeCommandOptions{Commands: []string{CommandAccepted, CommandForgetPicks}}
	if f.codeActionLiterals {
		caps.CodeActionProvider = &codeActionOptions{CodeActionKinds: []string{codeActionKindQuickFix}}
		if f.showDocument {
			caps.ExecuteCommandProvider.Commands = append(caps.ExecuteCommandProvider.Commands, CommandOpenPreview)
		}
	}
	// Every client may ask for the prompt that continues from a session;
	// only plugins that open it get the code action.
	caps.ExecuteCommandProvider.Commands = append(caps.ExecuteCommandProvider.Commands, CommandContinueFrom)
}

type executeCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

type showDocumentParams struct {
	URI       string `json:"uri"`
	TakeFocus bool   `json:"takeFocus"`
}

func (s *Server) executeCommandCall(params json.RawMessage) (call, error) {
	var p executeCommandParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, err)
	}
	switch p.Command {
	case CommandAccepted:
		run, err := s.acceptedCall(p.Arguments)
		if err != nil {
			return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, err)
		}
		return run, nil
	case CommandForgetPicks:
		return s.forgetPicksCall()
	case CommandContinueFrom:
		return s.continueFromCall(p.Arguments)
	}
	if p.Command != CommandOpenPreview || len(p.Arguments) != 1 {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, fmt.Errorf("unknown command %q with %d arguments", p.Command, len(p.Arguments)))
	}
	var uri string
	if err := json.Unmarshal(p.Arguments[0], &uri); err != nil {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, fmt.Errorf("the argument of %s must be a preview URI: %w", p.Command, err))
	}
	if _, err := sessionOfURI(uri); err != nil {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, err)
	}
	return func(ctx context.Context) (any, error) {
		var res struct {
			Success bool `json:"success"`
		}
		if _, err := s.conn.Call(ctx, protocol.MethodWindowShowDocument, showDocumentParams{URI: uri, TakeFocus: true}, &res); err != nil {
			return nil, fmt.Errorf("asking the client to show %s: %w", uri, err)
		}
		return nil, nil
	}, nil
}

type inlayHintOptions struct {
	ResolveProvider bool `json:"resolveProvider"`
}

// The values of the candidateOrder setting.
const (
	candidateOrderActive  = "active"
	candidateOrderCreated = "created"
)
