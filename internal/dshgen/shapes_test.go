package dshgen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// shapeSet maps "event type|path" to the key sets seen there.
type shapeSet map[string]map[string]bool

// keySet is the sorted, comma-joined keys of an object.
func keySet(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// add records the key set of v at path, when v is an object.
func (s shapeSet) add(typ, path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	k := typ + "|" + path
	if s[k] == nil {
		s[k] = map[string]bool{}
	}
	s[k][keySet(m)] = true
}

// addBlocks records content blocks by block type.
func (s shapeSet) addBlocks(typ, path string, content any) {
	blocks, _ := content.([]any)
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		s.add(typ, path+"["+str(m["type"])+"]", m)
	}
}

// collectShapes records the shapes of one parsed line.
func (s shapeSet) collectShapes(line map[string]any) {
	typ := str(line["type"])
	s.add(typ, "", line)
	data, ok := line["data"].(map[string]any)
	if !ok {
		return
	}
	s.add(typ, "data", data)
	s.add(typ, "data.usage", data["usage"])
	s.addBlocks(typ, "data.content", data["content"])
	if src, ok := data["source"].(map[string]any); ok {
		s.add(typ, "data.source#"+str(src["kind"])+"/"+str(src["plugin"]), src)
	}
	if c, ok := data["chunk"].(map[string]any); ok {
		s.add(typ, "data.chunk#"+str(c["type"]), c)
	}
	if msg, ok := data["message"].(map[string]any); ok {
		s.add(typ, "data.message", msg)
		s.addBlocks(typ, "data.message.content", msg["content"])
		if src, ok := msg["source"].(map[string]any); ok {
			s.add(typ, "data.message.source#"+str(src["kind"]), src)
		}
	}
}

// collectFileShapes records every line of a raw log, the header as type
// "session".
func collectFileShapes(t *testing.T, s shapeSet, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		s.collectShapes(v)
	}
}

// TestShapesMatchFixtures checks that every event the builder emits has,
// at every level, a set of keys that dsh itself wrote for the same event
// type in the recorded fixtures.
func TestShapesMatchFixtures(t *testing.T) {
	root := fixturesOrSkip(t)
	recorded := shapeSet{}
	paths, err := filepath.Glob(filepath.Join(root, "raw", "sessions", "*", "*", "session.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture logs found: %v", err)
	}
	for _, p := range paths {
		collectFileShapes(t, recorded, p)
	}
	recordedTypes := map[string]bool{}
	for k := range recorded {
		recordedTypes[strings.SplitN(k, "|", 2)[0]] = true
	}

	// Everything the builder can emit in a v0 log, plus headers of each kind.
	s := everyEventSession("shapes")
	s.Checkpoint("Earlier context was compacted.", 5, 5)
	sessions := []*Session{
		s,
		NewSession("no-cwd"),
		NewSession("child").Cwd("/p").Parent("parent"),
		NewSession("plain").Cwd("/p"),
	}
	generated := shapeSet{}
	dir := t.TempDir()
	for _, gs := range sessions {
		path, err := gs.Save(dir, Raw)
		if err != nil {
			t.Fatal(err)
		}
		collectFileShapes(t, generated, path)
	}

	keys := make([]string, 0, len(generated))
	for k := range generated {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, k := range keys {
		typ := strings.SplitN(k, "|", 2)[0]
		if !recordedTypes[typ] {
			t.Logf("skipping %s: no %q event in the fixtures", k, typ)
			continue
		}
		want, ok := recorded[k]
		if !ok {
			t.Logf("skipping %s: the fixtures have %q events but none with this part", k, typ)
			continue
		}
		for got := range generated[k] {
			if strings.Contains(got, "seedLength") || strings.Contains(got, "agentPreset") {
				t.Logf("skipping header keys %s: the fixtures hold no seeded session or preset", got)
				continue
			}
			checked++
			if !want[got] {
				t.Errorf("%s: generated keys {%s}, fixtures have %v", k, got, sortedKeys(want))
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d shapes compared; the cross-check lost its coverage", checked)
	}
	t.Logf("%d generated shapes compared with the fixtures", checked)
}

// sortedKeys lists a set's members in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, "{"+k+"}")
	}
	sort.Strings(out)
	return out
}
