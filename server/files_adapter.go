package server

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// filesAdapter is the production Files: package fileref's workspace index.
type filesAdapter struct {
	ix *fileref.Index
}

// NewFilerefFactory returns a FilesFactory that builds fileref indexes,
// logging to logger.
func NewFilerefFactory(logger *zap.Logger) FilesFactory {
	return func(ctx context.Context, root string, excluded []string) (Files, error) {
		ix, err := fileref.Build(ctx, fileref.Options{Root: root, ExcludedNames: excluded, Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("indexing workspace %s: %w", root, err)
		}
		return &filesAdapter{ix: ix}, nil
	}
}

// Search implements Files.
func (a *filesAdapter) Search(ctx context.Context, query string, limit int) ([]FileCandidate, bool, error) {
	res, capped, err := a.ix.Search(ctx, query, limit)
	if err != nil {
		return nil, false, err
	}
	out := make([]FileCandidate, len(res))
	for i, c := range res {
		kind := FileKindFile
		if c.Kind == fileref.KindDirectory {
			kind = FileKindDirectory
		}
		out[i] = FileCandidate{Path: c.Path, Kind: kind, Ignored: c.Ignored}
	}
	return out, capped, nil
}

// Count implements Files.
func (a *filesAdapter) Count() int { return a.ix.Files() }

// Apply feeds changed paths to the index.
func (a *filesAdapter) Apply(paths []string) {
	changes := make([]fileref.Change, len(paths))
	for i, p := range paths {
		changes[i] = fileref.Change{Path: p}
	}
	a.ix.Apply(changes)
}

// Close implements Files.
func (a *filesAdapter) Close() error { return nil }
