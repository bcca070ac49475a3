package sessionref

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// spillNameAttempts bounds the fresh random names tried when one is taken,
// as dsh's local spill store does: 48-bit names collide only when someone
// plants them.
const spillNameAttempts = 10

// spill writes the full projection of a truncated source (§2.3.9) to
// <spillDir>/session-<12 hex of sha256(target id)>/<12 random hex>-session-reference-<k>.txt
// (packages/spill/spill-local/src/store.ts). The directories are created
// and opened without following links and must belong to this user
// (createSpillFile, per platform); the file is created exclusively, 0600.
func spill(spillDir, targetID string, s source) (string, int, error) {
	text, err := renderSpill(s)
	if err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256([]byte(targetID))
	dirName := "session-" + hex.EncodeToString(sum[:])[:12]
	// The first name tried is the content's own: the same snapshot spilled
	// again (the same message prepared twice) finds its file and reuses it
	// instead of writing the whole spill once more.
	content := sha256.Sum256([]byte(text))
	if path, ok, err := spillByContent(spillDir, dirName, s.inputIndex+1, text, content); err != nil || ok {
		return path, len(text), err
	}
	for attempt := 1; ; attempt++ {
		var random [6]byte
		if _, err := rand.Read(random[:]); err != nil {
			return "", 0, fmt.Errorf("naming spill file: %w", err)
		}
		name := fmt.Sprintf("%s-session-reference-%d.txt", hex.EncodeToString(random[:]), s.inputIndex+1)
		path := filepath.Join(spillDir, dirName, name)
		f, err := createSpillFile(spillDir, dirName, name)
		if errors.Is(err, os.ErrExist) && attempt < spillNameAttempts {
			continue
		}
		if err != nil {
			return "", 0, err
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
}

// spillByContent writes text to the spill file named after its SHA-256, or
// finds that file already holding exactly text. ok is false when the name
// is taken by other bytes (the caller then picks a random name).
func spillByContent(spillDir, dirName string, k int, text string, content [sha256.Size]byte) (string, bool, error) {
	name := fmt.Sprintf("%s-session-reference-%d.txt", hex.EncodeToString(content[:6]), k)
	path := filepath.Join(spillDir, dirName, name)
	f, err := createSpillFile(spillDir, dirName, name)
	if errors.Is(err, os.ErrExist) {
		return path, sameSpill(path, len(text), content), nil
	}
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return "", false, fmt.Errorf("writing spill file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("closing spill file: %w", err)
	}
	return path, true, nil
}

// sameSpill reports whether the regular file at path (not followed through
// a link; its directory was just checked by createSpillFile) holds n bytes
// whose SHA-256 is content.
func sameSpill(path string, n int, content [sha256.Size]byte) bool {
	f, err := openRegularAs(path, "spill file")
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() != int64(n) {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), content[:])
}
