// Package userpath expands the home directory in paths that reach the
// server without passing through a shell: settings sent by an editor
// (`sessionsRoot = '~/.dsh/sessions'` in a Neovim or Helix config) and
// arguments an editor spawns the server with. A shell would have expanded
// them; an editor hands them over as written.
package userpath

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Expand returns p with the home directory written out: a leading `~`
// (alone, or before a path separator), and every `$HOME` or `${HOME}`
// (and, on Windows, `%USERPROFILE%`). `~user` and other variables are left
// as written. When the home directory is unknown, p comes back unchanged.
func Expand(p string) string {
	return expand(p, os.UserHomeDir, runtime.GOOS == "windows")
}

func expand(p string, home func() (string, error), windows bool) string {
	if !strings.ContainsAny(p, "~$%") {
		return p
	}
	h, err := home()
	if err != nil || h == "" {
		return p
	}
	switch {
	case p == "~":
		return h
	case strings.HasPrefix(p, "~/") || windows && strings.HasPrefix(p, `~\`):
		p = filepath.Join(h, p[2:])
	}
	p = replaceVar(p, "${HOME}", h, false)
	p = replaceVar(p, "$HOME", h, true)
	if windows {
		p = replaceFold(p, "%USERPROFILE%", h)
	}
	return p
}

// replaceVar replaces every name in p by value; with bare set (`$HOME`),
// only where the next byte cannot continue a variable name, so `$HOMEDIR`
// stays as written.
func replaceVar(p, name, value string, bare bool) string {
	var b strings.Builder
	for {
		i := strings.Index(p, name)
		if i < 0 {
			break
		}
		end := i + len(name)
		if bare && end < len(p) && isNameByte(p[end]) {
			b.WriteString(p[:end])
			p = p[end:]
			continue
		}
		b.WriteString(p[:i])
		b.WriteString(value)
		p = p[end:]
	}
	if b.Len() == 0 {
		return p
	}
	b.WriteString(p)
	return b.String()
}

// replaceFold replaces every name in p by value, ignoring ASCII case (as
// Windows reads its variables).
func replaceFold(p, name, value string) string {
	var b strings.Builder
	at := 0
	for i := 0; i+len(name) <= len(p); {
		if strings.EqualFold(p[i:i+len(name)], name) {
			b.WriteString(p[at:i])
			b.WriteString(value)
			i += len(name)
			at = i
			continue
		}
		i++
	}
	if at == 0 {
		return p
	}
	b.WriteString(p[at:])
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
