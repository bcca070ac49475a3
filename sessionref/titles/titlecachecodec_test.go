package titles

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// fillEvery sets every field of the struct v points to a value that is not
// its zero value, by reflection, so a field added later is filled too.
func fillEvery(t *testing.T, v reflect.Value, seed int) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		n := seed*100 + i + 1
		switch f.Kind() {
		case reflect.String:
			f.SetString("v" + string(rune('a'+n%26)) + "é" + string(rune('0'+n%10)))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(-n * 1000003))
		case reflect.Uint64:
			f.SetUint(uint64(n) << 40)
		case reflect.Uint8: // Entry.Prompt: the last value the cache accepts
			f.SetUint(uint64(dshlog.PromptWebhook))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"child-a": "label a", "child-b": ""}))
		case reflect.Array:
			for k := 0; k < f.Len(); k++ {
				f.Index(k).SetUint(uint64(n + k))
			}
		case reflect.Struct:
			fillEvery(t, f, seed+1)
		default:
			t.Fatalf("field %s of %s has kind %s, which the cache test does not fill", v.Type().Field(i).Name, v.Type(), f.Kind())
		}
	}
}

// TestCacheCodecKeepsEveryField round-trips a cached session whose every
// field (found by reflection, so also one added later) is set: a field the
// flat encoding forgets fails here.
func TestCacheCodecKeepsEveryField(t *testing.T) {
	var s cachedSession
	fillEvery(t, reflect.ValueOf(&s).Elem(), 1)
	// Never cached: derived from the root and the names on load.
	s.Entry.Path, s.Entry.Encoding, s.Entry.Generation = "", "", 0
	cf := &cacheFile{Format: cacheFormat, Root: "/root/sessions", Sessions: []cachedSession{s, {}}}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := encodeCache(w, cf); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := decodeCache(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cf) {
		t.Errorf("round trip changed the cache:\n got %+v\nwant %+v", got, cf)
	}
	// LoadCache's decoding (names in one derived path, interned strings,
	// the entry decoded apart, the search text and filters left in the
	// block) gives the same values.
	r := &cacheReader{b: buf.Bytes()}
	format, root, n, cwdBytes := r.header()
	if format != cf.Format || root != cf.Root || n != 2 || r.err != nil {
		t.Fatalf("header %d %q %d: %v", format, root, n, r.err)
	}
	tr := &cacheReader{b: r.b[:cwdBytes]}
	r.b = r.b[cwdBytes:]
	cwds := tr.cwdTable(true)
	if len(tr.b) != 0 || len(cwds) != 2 || cwds[0].cwd != s.Entry.Cwd || cwds[0].project != layout.ProjectDir(s.Entry.Cwd, true) || cwds[1].cwd != "" {
		t.Fatalf("the cwds are %+v, %d bytes after them", cwds, len(tr.b))
	}
	ld := newCacheLoad("/root/sessions")
	h, body := r.block()
	if r.err != nil || h.sessions != 2 || h.listed != 1 || h.text != len(s.SearchAll)+2 || len(r.b) != 0 {
		t.Fatalf("block %+v, %d bytes after it: %v", h, len(r.b), r.err)
	}
	r = &cacheReader{b: body[:h.fieldsEnd()]}
	text := body[h.size-h.text:]
	for i, want := range cf.Sessions {
		var got cachedSession
		var e dshlog.Entry
		n, cwd := r.session(&got, &e, cwds, ld)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if string(text[:n]) != want.SearchAll || text[n] != 0 || cwd != i {
			t.Errorf("session %d: search text %q (cwd %d), want %q (cwd %d)", i, text[:n], cwd, want.SearchAll, i)
		}
		text = text[n+1:]
		bs, ps := filters(body[h.fieldsEnd()+i*filterBytes:])
		if bs != want.SearchByteSet || ps != want.SearchPairSet {
			t.Errorf("session %d: filters %v %v, want %v %v", i, bs, ps, want.SearchByteSet, want.SearchPairSet)
		}
		if wantPath := filepath.Clean("/root/sessions") + string(filepath.Separator) + want.ProjectName + string(filepath.Separator) + want.DirName + string(filepath.Separator) + want.LogName; ld.logPath != wantPath {
			t.Errorf("session %d: log path %q, want %q", i, ld.logPath, wantPath)
		}
		got.Entry, got.SearchAll, got.SearchByteSet, got.SearchPairSet = e, want.SearchAll, want.SearchByteSet, want.SearchPairSet
		if !reflect.DeepEqual(got, want) {
			t.Errorf("session %d as LoadCache decodes it:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if len(r.b) != 0 || len(text) != 0 {
		t.Errorf("%d bytes of fields and %d of texts left after the block's sessions", len(r.b), len(text))
	}
}

// TestTruncatedCacheIsUnusable cuts a real cache file at every length and
// flips bytes in its body: each is refused as unusable (never a panic, and
// nothing is listed), or, when a flip leaves it decodable, loaded without
// listing anything its directories do not encode.
func TestTruncatedCacheIsUnusable(t *testing.T) {
	s := newTestStore(t)
	s.simple("cut-1", "/work/c", fixtureTime, titleEvent(0, "One"))
	s.simple("cut-2", "", fixtureTime+1000, titleEvent(0, "Two"))
	dir := t.TempDir()
	good := filepath.Join(dir, "index.gob")
	if err := s.index().SaveCache(good); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// Each damaged copy is a new file, removed after it is read: rewriting
	// one file in place truncates it each time, and ext4 (auto_da_alloc)
	// then writes it out to the disk at close, so on a busy CI machine the
	// test waited on the disk thousands of times (43 s; 0.3 s alone).
	bad := func(i int, data []byte) string {
		p := filepath.Join(dir, fmt.Sprintf("bad-%d.gob", i))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		return p
	}
	for n := 0; n < len(raw); n++ {
		cut := bad(n, raw[:n])
		ix := NewIndex(s.root, IndexOptions{})
		if err := ix.LoadCache(cut); !errors.Is(err, ErrCacheUnusable) {
			t.Fatalf("cache cut at %d of %d bytes: %v, want ErrCacheUnusable", n, len(raw), err)
		}
		os.Remove(cut)
		if got := len(ix.Snapshot().Sessions); got != 0 {
			t.Fatalf("cache cut at %d bytes listed %d sessions", n, got)
		}
	}
	if err := NewIndex(s.root, IndexOptions{}).LoadCache(bad(-1, append(append([]byte{}, raw...), 0))); !errors.Is(err, ErrCacheUnusable) {
		t.Errorf("cache with a trailing byte: %v, want ErrCacheUnusable", err)
	}
	for i := len(cacheMagic); i < len(raw); i++ {
		flipped := append([]byte{}, raw...)
		flipped[i] ^= 0xff
		path := bad(len(raw)+i, flipped)
		ix := NewIndex(s.root, IndexOptions{})
		err := ix.LoadCache(path)
		os.Remove(path)
		if err != nil {
			if !errors.Is(err, ErrCacheUnusable) {
				t.Fatalf("byte %d flipped: %v", i, err)
			}
			continue
		}
		for _, e := range ix.Snapshot().Sessions {
			if e.ID != "cut-1" && e.ID != "cut-2" {
				t.Fatalf("byte %d flipped: listed %q", i, e.ID)
			}
		}
	}
}

// TestCacheReaderIntIsVarint decodes, through the one-byte shortcut and
// binary.Varint alike, every value whose encoding is one byte and values
// around the longer encodings' edges.
func TestCacheReaderIntIsVarint(t *testing.T) {
	values := []int64{math.MinInt64, math.MaxInt64, -8193, -8192, 8191, 8192, -65, 64, 1 << 40, -(1 << 40)}
	for v := int64(-64); v <= 63; v++ {
		values = append(values, v)
	}
	for _, v := range values {
		var buf bytes.Buffer
		w := &cacheWriter{w: &buf}
		w.int(v)
		w.int(v)
		enc := buf.Bytes()
		r := &cacheReader{b: enc}
		if a, b := r.int(), r.int(); a != v || b != v || r.err != nil || len(r.b) != 0 {
			t.Errorf("%d encoded as % x decodes to %d, %d (%v, %d bytes left)", v, enc[:len(enc)/2], a, b, r.err, len(r.b))
		}
		if want, n := binary.Varint(enc); want != v || n != len(enc)/2 {
			t.Errorf("%d: binary.Varint reads %d from % x", v, want, enc)
		}
	}
	r := &cacheReader{b: []byte{0x80}}
	if v := r.int(); v != 0 || r.err == nil {
		t.Errorf("a truncated varint decodes to %d (%v), want an error", v, r.err)
	}
}

// TestCacheRefusesUnknownKindBits: a cached session whose kind field holds
// a prompt no reader gives (3), or bits beyond Seeded and Described, makes
// the cache unusable instead of classifying sessions at random.
func TestCacheRefusesUnknownKindBits(t *testing.T) {
	for _, bad := range []int64{3, 16, -1} {
		var e dshlog.Entry
		if setKindBits(&e, bad) {
			t.Errorf("setKindBits(%d) accepted", bad)
		}
	}
	for b := int64(0); b < 16; b++ {
		var e dshlog.Entry
		if ok := setKindBits(&e, b); ok != (b&kindBitsPrompt != 3) {
			t.Errorf("setKindBits(%d) = %v", b, ok)
		} else if ok && int64(kindBits(&e)) != b {
			t.Errorf("kind bits %d came back as %d", b, kindBits(&e))
		}
	}
	var s cachedSession
	s.Entry.ID, s.Entry.Prompt = "bad-prompt", 3
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := encodeCache(w, &cacheFile{Format: cacheFormat, Root: "/r", Sessions: []cachedSession{s}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeCache(buf.Bytes()); !errors.Is(err, errCacheTruncated) {
		t.Errorf("decoding a session with prompt 3: %v, want errCacheTruncated", err)
	}
}
