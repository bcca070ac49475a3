//go:build !linux

package watch

// networkFilesystem cannot tell a network filesystem apart on this
// platform; fsnotify is used, and watch limits still fall back to polling.
func networkFilesystem(string) (string, bool) { return "", false }
