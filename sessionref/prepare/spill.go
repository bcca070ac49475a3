package prepare

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

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// spillNameAttempts bounds the fresh random names tried when one is taken,
// as dsh's local spill store does: 48-bit names collide only when someone
// plants them.
const spillNameAttempts = 10

// spill writes the full projection of a truncated source (§2.3.9) to
// <spillDir>/session-<12 hex of sha256(target id)>/<12 hex>-session-reference-<k>.txt
// (packages/spill/spill-local/src/store.ts). The directories are created
// and opened without following links and must belong to this user
// (createSpillFile, per platform); the file is created exclusively, 0600.
//
// The spill is rendered twice, never held: once into SHA-256 to name the
// file after its content, then, only when no file of that name holds
// exactly those bytes, into the file itself. So the same snapshot
// prepared again finds its file and writes nothing.
func spill(spillDir, targetID string, s source) (string, int, error) {
	h := sha256.New()
	n, err := renderSpill(h, s)
	if err != nil {
		return "", 0, err
	}
	var content [sha256.Size]byte
	h.Sum(content[:0])
	sum := sha256.Sum256([]byte(targetID))
	dirName := "session-" + hex.EncodeToString(sum[:])[:12]
	k := s.inputIndex + 1
	if path, ok, err := spillByContent(spillDir, dirName, k, s, n, content); err != nil || ok {
		return path, int(n), err
	}
	for attempt := 1; ; attempt++ {
		var random [6]byte
		if _, err := rand.Read(random[:]); err != nil {
			return "", 0, fmt.Errorf("naming spill file: %w", err)
		}
		name := fmt.Sprintf("%s-session-reference-%d.txt", hex.EncodeToString(random[:]), k)
		path := filepath.Join(spillDir, dirName, name)
		f, err := createSpillFile(spillDir, dirName, name)
		if errors.Is(err, os.ErrExist) && attempt < spillNameAttempts {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		if err := writeSpill(f, path, s); err != nil {
			return "", 0, err
		}
		return path, int(n), nil
	}
}

// writeSpill renders the source into the new spill file f at path and
// closes it; on failure the file is removed.
func writeSpill(f *os.File, path string, s source) error {
	if _, err := renderSpill(f, s); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing spill file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("closing spill file: %w", err)
	}
	return nil
}

// spillByContent writes the spill to the file named after its SHA-256, or
// finds that file already holding exactly its n bytes. ok is false when
// the name is taken by other bytes (the caller then picks a random name).
func spillByContent(spillDir, dirName string, k int, s source, n int64, content [sha256.Size]byte) (string, bool, error) {
	name := fmt.Sprintf("%s-session-reference-%d.txt", hex.EncodeToString(content[:6]), k)
	path := filepath.Join(spillDir, dirName, name)
	f, err := createSpillFile(spillDir, dirName, name)
	if errors.Is(err, os.ErrExist) {
		return path, sameSpill(path, n, content), nil
	}
	if err != nil {
		return "", false, err
	}
	if err := writeSpill(f, path, s); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// sameSpill reports whether the regular file at path (not followed through
// a link; its directory was just checked by createSpillFile) holds n bytes
// whose SHA-256 is content.
func sameSpill(path string, n int64, content [sha256.Size]byte) bool {
	f, err := dshlog.OpenRegular(path, "spill file")
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() != n {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), content[:])
}
