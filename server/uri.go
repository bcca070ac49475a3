package server

import (
	"runtime"
	"strings"

	"go.lsp.dev/uri"
)

// hostPlatform is the path syntax of the machine the server runs on.
func hostPlatform() uri.Platform {
	if runtime.GOOS == "windows" {
		return uri.PlatformWindows
	}
	return uri.PlatformPOSIX
}

// uriToPath converts a file:// URI to a path of this machine; other strings
// pass through unchanged.
func uriToPath(u string) string { return uriToPathFor(u, hostPlatform()) }

// uriToPathFor converts a file:// URI to a path with platform's syntax, the
// way VS Code's own vscode-uri does: "file:///c%3A/w/a%20b.md" and
// "file:///C:/w/a b.md" both give `c:\w\a b.md` on Windows (the drive letter
// lowercased, never "/C:/…"), "file://server/share/x" gives the UNC path
// `\\server\share\x`. A string that is not a file URI passes through.
func uriToPathFor(s string, platform uri.Platform) string {
	if len(s) < len("file:") || !strings.EqualFold(s[:len("file:")], "file:") {
		return s // vscode-uri would read a scheme-less string as a file path
	}
	u, err := uri.Parse(s)
	if err != nil || !u.IsFile() {
		return s
	}
	return uri.FsPathFor(u, platform, false)
}

// pathToURI is the file:// URI of an absolute path of this machine.
func pathToURI(path string) string { return pathToURIFor(path, hostPlatform()) }

// pathToURIFor is the file:// URI of an absolute path in platform's syntax,
// in the canonical form VS Code sends: `C:\w\a b.md` on Windows gives
// "file:///c%3A/w/a%20b.md".
func pathToURIFor(path string, platform uri.Platform) string {
	return uri.FileFor(platform, path).String()
}

// samePath reports whether two cleaned paths (or slash paths relative to
// the workspace) name the same file: Windows file systems ignore case, so
// `Notes\Plan.md` and `notes\plan.md` are one file there.
func samePath(a, b string) bool { return samePathFor(a, b, hostPlatform()) }

func samePathFor(a, b string, platform uri.Platform) bool {
	if platform == uri.PlatformWindows {
		return strings.EqualFold(strings.ReplaceAll(a, `\`, "/"), strings.ReplaceAll(b, `\`, "/"))
	}
	return a == b
}
