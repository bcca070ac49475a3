package recall

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// The stored index: storeMagic, then a zstd stream of gob values — a
// storedHeader, then storedHeader.Docs storedDocs. storeFormat changes
// whenever what is stored does; a file of another format, of another root,
// or that does not decode is not used (the index is rebuilt from the logs
// and the file replaced at the next save). The file holds conversation
// text, so it is written 0600 in a 0700 directory (docs/reliability.md).
const (
	storeMagic  = "dsh-refls recall index\n"
	storeFormat = 1
	// maxStoredDocs bounds what a stored header may announce.
	maxStoredDocs = 1 << 24
)

// ErrStoreUnusable wraps every reason a stored index is not used.
var ErrStoreUnusable = errors.New("stored recall index unusable")

type storedHeader struct {
	Format int
	Root   string
	Docs   int
}

type storedDoc struct {
	ID        string
	CreatedAt int64
	Path      string
	Offset    int64
	LastSeq   int64
	Gen       int
	Version   int
	Corrupt   string
	Msgs      []storedMsg
}

type storedMsg struct {
	Role string
	Seq  int64
	Text string
}

// DefaultPath is where the recall index of root is stored: beside the
// title-index cache (sessionref.DefaultCachePath), as recall-<hash>.zst.
func DefaultPath(root string) (string, error) {
	p, err := sessionref.DefaultCachePath(root)
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "index-"), filepath.Ext(p))
	return filepath.Join(filepath.Dir(p), "recall-"+base+".zst"), nil
}

// Changes counts the syncs and loads that changed the indexed documents;
// a caller saves when it moved since its last save.
func (ix *Index) Changes() uint64 { return ix.changes.Load() }

// Save writes the indexed documents of root to path atomically: a private
// temporary file in the same directory, synced, then renamed over the old
// one. A failed save leaves the old file in place.
func (ix *Index) Save(path, root string) error {
	ix.syncMu.Lock()
	docs := make([]*doc, 0, len(ix.docs))
	for _, d := range ix.docs {
		docs = append(docs, d)
	}
	ix.syncMu.Unlock()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the recall index directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".recall-*.tmp") // O_EXCL, mode 0600
	if err != nil {
		return fmt.Errorf("creating the recall index file: %w", err)
	}
	defer os.Remove(tmp.Name()) // nothing left to remove after the rename
	err = writeStore(tmp, root, docs)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the recall index %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the recall index %s: %w", path, err)
	}
	return nil
}

func writeStore(f *os.File, root string, docs []*doc) error {
	return writeStoreAs(f, root, docs, storeFormat)
}

func writeStoreAs(f *os.File, root string, docs []*doc, format int) error {
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.WriteString(w, storeMagic); err != nil {
		return err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	enc := gob.NewEncoder(zw)
	if err := enc.Encode(storedHeader{Format: format, Root: root, Docs: len(docs)}); err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	for _, d := range docs {
		sd := storedDoc{ID: d.id, CreatedAt: d.createdAt, Path: d.key.path, Offset: d.key.offset, LastSeq: d.key.lastSeq,
			Gen: d.key.generation, Version: d.key.formatVersion, Corrupt: d.key.corrupt, Msgs: make([]storedMsg, len(d.msgs))}
		for i, m := range d.msgs {
			sd.Msgs[i] = storedMsg{Role: m.role, Seq: m.seq, Text: m.text}
		}
		if err := enc.Encode(&sd); err != nil {
			return fmt.Errorf("encoding: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// Load replaces the documents of the index with those stored at path for
// root and publishes them, so searches are answered before the first Sync,
// which then projects again only the sessions whose logs changed. An
// unusable file (foreign, of another format or root, corrupt) is an error
// wrapping ErrStoreUnusable and leaves the index as it was.
func (ix *Index) Load(path, root string) error {
	f, err := sessionref.OpenRegular(path, "recall index")
	if err != nil {
		return err
	}
	defer f.Close()
	docs, err := readStore(bufio.NewReaderSize(f, 1<<20), root)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStoreUnusable, path, err)
	}
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	ix.docs = docs
	ix.failed = map[string]entryKey{}
	ix.base = nil
	ix.projected = 0
	ix.changes.Add(1)
	ix.publish()
	return nil
}

func readStore(r *bufio.Reader, root string) (map[string]*doc, error) {
	magic := make([]byte, len(storeMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != storeMagic {
		return nil, errors.New("not a dsh-refls recall index")
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	dec := gob.NewDecoder(zr)
	var h storedHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	switch {
	case h.Format != storeFormat:
		return nil, fmt.Errorf("format %d, want %d", h.Format, storeFormat)
	case h.Root != root:
		return nil, fmt.Errorf("indexes %s, not %s", h.Root, root)
	case h.Docs < 0 || h.Docs > maxStoredDocs:
		return nil, fmt.Errorf("announces %d sessions", h.Docs)
	}
	docs := make(map[string]*doc, h.Docs)
	f := newFolder()
	for i := 0; i < h.Docs; i++ {
		var sd storedDoc
		if err := dec.Decode(&sd); err != nil {
			return nil, fmt.Errorf("decoding session %d of %d: %w", i+1, h.Docs, err)
		}
		if sd.ID == "" || docs[sd.ID] != nil {
			return nil, fmt.Errorf("session %d has an empty or repeated id %q", i+1, sd.ID)
		}
		e := sessionref.Entry{ID: sd.ID, CreatedAt: sd.CreatedAt, Path: sd.Path, Offset: sd.Offset, LastSeq: sd.LastSeq,
			Generation: sd.Gen, FormatVersion: sd.Version, Corrupt: sd.Corrupt}
		p := &sessionref.Projection{SessionID: sd.ID, Messages: make([]sessionref.ProjectedMessage, len(sd.Msgs))}
		for k, m := range sd.Msgs {
			p.Messages[k] = sessionref.ProjectedMessage{Role: m.Role, Seq: m.Seq, Text: m.Text}
		}
		docs[sd.ID] = newDoc(f, &e, p)
	}
	// The zstd frame's checksum is verified at its end: read it.
	if n, err := io.Copy(io.Discard, zr); err != nil || n != 0 {
		return nil, fmt.Errorf("trailing data or a bad checksum after %d sessions (%d bytes, %v)", h.Docs, n, err)
	}
	return docs, nil
}
