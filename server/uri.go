package server

import (
	"net/url"
	"path/filepath"
)

// uriToPath converts a file:// URI to a path; other strings pass through.
func uriToPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "file" {
		return u
	}
	return filepath.FromSlash(parsed.Path)
}

// pathToURI is the file:// URI of an absolute path.
func pathToURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
