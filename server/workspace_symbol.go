package server

import (
	"context"
	"encoding/json"

	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"go.lsp.dev/protocol"
)

// Workspace symbols list sessions so that an editor's symbol picker (VS
// Code Ctrl+T, Neovim vim.lsp.buf.workspace_symbol, Emacs
// xref-find-apropos) jumps to a session's recall preview.
const (
	// maxWorkspaceSymbols bounds one answer.
	maxWorkspaceSymbols = 100
	// symbolKindFile is LSP's SymbolKind.File: the preview is a document.
	symbolKindFile = 1
)

// symbolInformation is an LSP SymbolInformation.
type symbolInformation struct {
	Name          string   `json:"name"`
	Kind          int      `json:"kind"`
	Location      location `json:"location"`
	ContainerName string   `json:"containerName,omitempty"`
}

func (s *Server) workspaceSymbolCall(params json.RawMessage) (call, error) {
	var p struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodWorkspaceSymbol, err)
	}
	return func(ctx context.Context) (any, error) { return s.workspaceSymbols(ctx, p.Query) }, nil
}

// workspaceSymbols are the sessions matching query by title, id or working
// directory, ranked as completion ranks them (same workspace first); the
// session the prompt is written in is left out.
func (s *Server) workspaceSymbols(ctx context.Context, query string) ([]symbolInformation, error) {
	out := []symbolInformation{}
	if s.currentSessions() == nil {
		return out, nil
	}
	snap, err := s.readySnapshot(ctx)
	if err != nil || snap == nil {
		return out, err
	}
	cfg := s.config()
	cands, _, err := snap.Candidates(titles.CandidateQuery{Query: query, TargetID: cfg.SessionID, TargetCwd: cfg.Cwd, Limit: maxWorkspaceSymbols,
		ByActivity: cfg.CandidateOrder != candidateOrderCreated})
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		sym := symbolInformation{Name: c.DisplayTitle, Kind: symbolKindFile,
			Location: location{URI: PreviewURI(c.SessionID, c.DisplayTitle)}}
		if c.Cwd != nil {
			sym.ContainerName = *c.Cwd
		} else {
			sym.ContainerName = c.SessionID
		}
		out = append(out, sym)
	}
	return out, nil
}
