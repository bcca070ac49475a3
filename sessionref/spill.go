package sessionref

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// spill writes the full projection of a truncated source (§2.3.9).
func spill(spillDir, targetID string, s source) (string, int, error) {
	sum := sha256.Sum256([]byte(targetID))
	dir := filepath.Join(spillDir, "session-"+hex.EncodeToString(sum[:])[:12])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("creating spill directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("securing spill directory: %w", err)
	}
	var random [6]byte
	if _, err := rand.Read(random[:]); err != nil {
		return "", 0, fmt.Errorf("naming spill file: %w", err)
	}
	name := fmt.Sprintf("%s-session-reference-%d.txt", hex.EncodeToString(random[:]), s.inputIndex+1)
	text, err := renderSpill(s)
	if err != nil {
		return "", 0, err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("creating spill file: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return "", 0, fmt.Errorf("writing spill file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", 0, fmt.Errorf("closing spill file: %w", err)
	}
	return path, len(text), nil
}
