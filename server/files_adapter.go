package server

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// filesAdapter is the production Files: package fileref's built
// workspace index, which takes change notifications.
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

// openInterimFiles is the file source until the workspace index is built
// (or when none is configured): the same fileref rules of SPEC §3 — no
// directory symlink followed, ignore files honoured — applied to live
// listings and a bounded walk. A root that cannot be opened gives a
// source that offers nothing.
func openInterimFiles(root string, excluded []string, logger *zap.Logger) Files {
	ix, err := fileref.Open(fileref.Options{Root: root, ExcludedNames: excluded, Logger: logger})
	if err != nil {
		logger.Warn("workspace root unusable; no files offered", zap.String("root", root), zap.Error(err))
		return noFiles{}
	}
	return interimFiles{ix: ix}
}

// interimFiles is an opened, unbuilt fileref index. It takes no change
// notifications: it reads the disk on every query.
type interimFiles struct {
	ix *fileref.Index
}

// Search implements Files.
func (f interimFiles) Search(ctx context.Context, query string, limit int) ([]FileCandidate, bool, error) {
	return searchIndex(ctx, f.ix, query, limit)
}

// Count implements Files: nothing is indexed yet.
func (interimFiles) Count() int { return 0 }

// Close implements Files.
func (interimFiles) Close() error { return nil }

// Search implements Files.
func (a *filesAdapter) Search(ctx context.Context, query string, limit int) ([]FileCandidate, bool, error) {
	return searchIndex(ctx, a.ix, query, limit)
}

// searchIndex converts fileref's candidates for the server.
func searchIndex(ctx context.Context, ix *fileref.Index, query string, limit int) ([]FileCandidate, bool, error) {
	res, capped, err := ix.Search(ctx, query, limit)
	if err != nil {
		return nil, false, err
	}
	out := make([]FileCandidate, len(res))
	for i, c := range res {
		out[i] = FileCandidate{Path: c.Path, Kind: c.Kind, Ignored: c.Ignored, Score: c.Score}
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

// noFiles is the file source of a workspace root that cannot be opened.
type noFiles struct{}

func (noFiles) Search(context.Context, string, int) ([]FileCandidate, bool, error) {
	return []FileCandidate{}, false, nil
}
func (noFiles) Count() int   { return 0 }
func (noFiles) Close() error { return nil }
