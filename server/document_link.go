package server

import (
	"fmt"
	"path/filepath"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// fileLinks links the file mentions of doc that name an existing file of
// the workspace to that file, with the line range as a fragment
// (`#L10`, `#L10-20`, which VS Code and others open at those lines).
// Directories, missing paths and paths outside the workspace get none.
func (s *Server) fileLinks(doc document, m *Mapper) []documentLink {
	out := []documentLink{}
	root := s.workspace()
	if root == "" {
		return out
	}
	for _, fm := range fileMentionsIn(doc.Text, m) {
		f := fileref.StatMention(root, fm.Path)
		if f.Missing || f.OutsideWorkspace || f.Kind != fileref.KindFile {
			continue
		}
		target := pathToURI(filepath.Join(root, filepath.FromSlash(fm.Path)))
		tip := "Open " + fm.Path
		if fm.Lines != nil && fm.Lines.Valid() {
			target += "#" + fm.Lines.String()
			tip = fmt.Sprintf("Open %s at %s", fm.Path, fm.Lines)
		}
		out = append(out, documentLink{Range: m.Range(fm.Start, fm.End), Target: target, Tooltip: tip})
	}
	return out
}
