package sessionref

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
