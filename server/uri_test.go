package server

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"go.lsp.dev/uri"
)

// TestURIToPathWindows covers the URIs a Windows client sends: VS Code
// percent-encodes the drive colon and lowercases the letter, other clients
// (Neovim's vim.uri_from_fname, eglot) send "file:///C:/…".
func TestURIToPathWindows(t *testing.T) {
	tests := []struct{ in, want string }{
		{"file:///c%3A/Users/me/notes/a%20b.md", `c:\Users\me\notes\a b.md`},
		{"file:///C:/x", `c:\x`},
		{"file:///C:/Users/me/design%20notes/rate%20plan.md", `c:\Users\me\design notes\rate plan.md`},
		{"file:///d%3a/w/%40x.md", `d:\w\@x.md`},
		{"file://server/share/w/p.md", `\\server\share\w\p.md`},
		{"untitled:Untitled-1", "untitled:Untitled-1"},
		{"not a uri", "not a uri"},
	}
	for _, tt := range tests {
		if got := uriToPathFor(tt.in, uri.PlatformWindows); got != tt.want {
			t.Errorf("uriToPathFor(%q, windows) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestURIToPathPOSIX(t *testing.T) {
	tests := []struct{ in, want string }{
		{"file:///home/me/a%20b.md", "/home/me/a b.md"},
		{"file:///home/me/mod%40v1/%23x%25.md", "/home/me/mod@v1/#x%.md"},
		{"file:///%C3%BC/n.md", "/ü/n.md"},
		{"untitled:Untitled-1", "untitled:Untitled-1"},
	}
	for _, tt := range tests {
		if got := uriToPathFor(tt.in, uri.PlatformPOSIX); got != tt.want {
			t.Errorf("uriToPathFor(%q, posix) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPathToURI checks the form sent to clients: the one VS Code sends
// itself, so a URI the server builds and one the client sent compare equal.
func TestPathToURI(t *testing.T) {
	tests := []struct {
		platform uri.Platform
		in, want string
	}{
		{uri.PlatformWindows, `C:\Users\me\a b.md`, "file:///c%3A/Users/me/a%20b.md"},
		{uri.PlatformWindows, `c:\w`, "file:///c%3A/w"},
		{uri.PlatformWindows, `\\server\share\p.md`, "file://server/share/p.md"},
		{uri.PlatformPOSIX, "/home/me/a b.md", "file:///home/me/a%20b.md"},
		{uri.PlatformPOSIX, "/w/a@b#c%.md", "file:///w/a%40b%23c%25.md"},
	}
	for _, tt := range tests {
		got := pathToURIFor(tt.in, tt.platform)
		if got != tt.want {
			t.Errorf("pathToURIFor(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back := uriToPathFor(got, tt.platform)
		if !samePathFor(back, tt.in, tt.platform) {
			t.Errorf("%q → %q → %q: not the same file", tt.in, got, back)
		}
	}
}

func TestSamePath(t *testing.T) {
	if !samePathFor(`c:\W\Notes\Plan.md`, `C:\w\notes\plan.md`, uri.PlatformWindows) {
		t.Error("windows: paths differing in case only must name one file")
	}
	if !samePathFor("Notes/Plan.md", `notes\plan.md`, uri.PlatformWindows) {
		t.Error("windows: slash and backslash separators must compare equal")
	}
	if samePathFor("/w/Plan.md", "/w/plan.md", uri.PlatformPOSIX) {
		t.Error("posix: paths differing in case are two files")
	}
}

// TestURIRoundTripHost runs on the host's own paths (a drive-letter temp
// directory under Windows): a real directory survives path → URI → path
// and is still found on disk.
func TestURIRoundTripHost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "design notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	u := pathToURI(dir)
	back := uriToPath(u)
	if !samePath(back, dir) {
		t.Fatalf("%s: %q → %q → %q", runtime.GOOS, dir, u, back)
	}
	if info, err := os.Stat(back); err != nil || !info.IsDir() {
		t.Fatalf("%q from %q is not the directory: %v", back, u, err)
	}
	if runtime.GOOS == "windows" && (len(back) < 2 || back[1] != ':') {
		t.Fatalf("%q has no drive letter", back)
	}
}
