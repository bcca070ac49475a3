// Package fileref is the workspace file index behind "@" file mentions.
//
// Build walks the workspace in parallel, never following directory symlinks
// and never yielding a path outside the root, and keeps exactly the paths git
// would show (git's ignore rules, including nested .gitignore files,
// .git/info/exclude, the global excludes file and nested repositories with
// their own rules), refined by .dshignore files and configured excluded
// directory names. Search ranks paths with fzf-style fuzzy scoring, or lists
// a directory live when the query names one. Apply keeps the index current
// from change notifications; readers always see an immutable snapshot.
//
// The package speaks no protocol: the server converts Candidate and
// FileFacts into LSP shapes.
package fileref
