package prepare

import (
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// latestText is the newest message of the retention scenario of §2.3.6.
var latestText = "latest-" + strings.Repeat("界", 400)

// promptDataObjects returns the raw data objects between the tags of a
// prompt, exactly as serialised there.
func promptDataObjects(t *testing.T, prompt string) []json.RawMessage {
	t.Helper()
	open := "<referenced-sessions>" + "\n"
	i := strings.Index(prompt, open)
	j := strings.Index(prompt, "\n"+"</referenced-sessions>")
	if i < 0 || j < i {
		t.Fatalf("prompt has no referenced-sessions block:\n%s", prompt)
	}
	var objs []json.RawMessage
	if err := json.Unmarshal([]byte(prompt[i+len(open):j]), &objs); err != nil {
		t.Fatalf("block is not a JSON array: %v", err)
	}
	return objs
}

// decodeData decodes one data object of the prompt.
func decodeData(t *testing.T, raw json.RawMessage) snapshotData {
	t.Helper()
	var d snapshotData
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decoding data object %s: %v", raw, err)
	}
	return d
}

// checkMarkerCut checks that got is a head/tail cut of original followed
// by the exact omission marker, and returns N.
func checkMarkerCut(t *testing.T, original, got string) int {
	t.Helper()
	k := strings.LastIndex(got, "\n[… omitted ")
	if k < 0 || !strings.HasSuffix(got, " UTF-8 bytes …]") {
		t.Fatalf("text %q does not end with the omission marker", got)
	}
	nText := strings.TrimSuffix(got[k+len("\n[… omitted "):], " UTF-8 bytes …]")
	n, err := strconv.Atoi(nText)
	if err != nil {
		t.Fatalf("marker count %q is not a number", nText)
	}
	kept := got[:k]
	if len(original)-len(kept) != n {
		t.Errorf("marker says %d bytes omitted; %d of %d bytes were kept", n, len(kept), len(original))
	}
	// kept is a prefix of original followed by a suffix of it.
	ok := false
	for h := 0; h <= len(kept); h++ {
		if strings.HasPrefix(original, kept[:h]) && strings.HasSuffix(original, kept[h:]) && len(kept) <= len(original) {
			ok = true
			break
		}
	}
	if !ok {
		t.Errorf("kept text %q is not a head and tail of the original", kept)
	}
	if !utf8.ValidString(got) {
		t.Errorf("cut text is not valid UTF-8: %q", got)
	}
	return n
}

func TestRetentionCheckpointAndLongNewestUnderBudget(t *testing.T) {
	s := logtest.NewStore(t)
	ids := []string{"src-1", "src-2", "src-3"}
	var refs []sessionref.Reference
	for i, id := range ids {
		s.Simple(id, "/home/u/proj", logtest.FixtureTime+int64(i),
			logtest.UserMsg(0, "an early question that gets compacted away"),
			logtest.CheckpointMsg(1, "Summary: work so far."),
			logtest.AssistantMsg(2, latestText),
			logtest.TurnEnd(3))
		refs = append(refs, sessionref.Reference{SessionID: id})
	}
	ix := buildIndex(s)
	const budget = 360

	for _, n := range []int{1, 3} {
		t.Run(strconv.Itoa(n)+" sources", func(t *testing.T) {
			prep, err := Prepare(context.Background(), ix.Snapshot(), "target", refs[:n], Limits{MaxReferenceBytes: budget})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			objs := promptDataObjects(t, prep.Context.Content[0].Text)
			if len(objs) != n {
				t.Fatalf("%d data objects, want %d", len(objs), n)
			}
			for i, raw := range objs {
				if len(raw) > budget {
					t.Errorf("source %d: data object is %d bytes, budget %d", i, len(raw), budget)
				}
				size, err := TagSafeSize(decodeData(t, raw))
				if err != nil || size != len(raw) {
					t.Errorf("source %d: tag-safe size %d (%v), serialised %d", i, size, err, len(raw))
				}
				d := decodeData(t, raw)
				if len(d.Conversation) != 2 {
					t.Fatalf("source %d: conversation %+v, want the checkpoint and the newest message", i, d.Conversation)
				}
				if d.Conversation[0].Text != "Summary: work so far." {
					t.Errorf("source %d: checkpoint became %q", i, d.Conversation[0].Text)
				}
				omitted := checkMarkerCut(t, latestText, d.Conversation[1].Text)
				if !strings.HasPrefix(d.Conversation[1].Text, "latest-") {
					t.Errorf("source %d: head of the newest message lost: %q", i, d.Conversation[1].Text)
				}
				f := prep.Context.Source.References[i]
				// The early question is dropped (step a) before the newest is cut.
				if !f.Truncated || !f.Compacted || f.OmittedMessages != 1 || f.RetainedMessages != 2 || f.OriginalMessages != 3 {
					t.Errorf("source %d: stats %+v", i, f.Stats)
				}
				wantBytes := int64(omitted + len("an early question that gets compacted away"))
				if f.OmittedBytes != wantBytes {
					t.Errorf("source %d: omittedBytes = %d, want %d", i, f.OmittedBytes, wantBytes)
				}
			}
		})
	}
}

func TestRetentionBudgetTooSmall(t *testing.T) {
	s := logtest.NewStore(t)
	s.Simple("src", "/p", logtest.FixtureTime, logtest.CheckpointMsg(0, "Summary."), logtest.AssistantMsg(1, latestText))
	ix := buildIndex(s)
	spill := filepath.Join(t.TempDir(), "spill")
	prep, err := Prepare(context.Background(), ix.Snapshot(), "target", []sessionref.Reference{{SessionID: "src"}},
		Limits{MaxReferenceBytes: 16, SpillDir: spill})
	e := wantCode(t, err, sessionref.CodeBudgetExceeded)
	if prep != nil {
		t.Errorf("a failed preparation returned %+v", prep)
	}
	if e.SessionID != "src" {
		t.Errorf("error names session %q, want src", e.SessionID)
	}
	if entries, err := os.ReadDir(spill); err == nil && len(entries) > 0 {
		t.Errorf("spill directory holds %d entries after a failed preparation", len(entries))
	}
}

// specCut is the head/tail cut of §2.3.6 for a kept byte count r, written
// from the contract's text without the package's helpers.
func specCut(original string, r int) string {
	h, tl := (r+1)/2, r/2
	if h > len(original) {
		h = len(original)
	}
	for h > 0 && h < len(original) && !utf8.RuneStart(original[h]) {
		h-- // the head ends inside a sequence: drop the partial sequence
	}
	start := len(original) - tl
	if start < h {
		start = h
	}
	for start < len(original) && !utf8.RuneStart(original[start]) {
		start++ // the tail starts with continuation bytes: drop them
	}
	head, tail := original[:h], original[start:]
	return head + tail + "\n[… omitted " + strconv.Itoa(len(original)-len(head)-len(tail)) + " UTF-8 bytes …]"
}

// specLargestCut is the result for the largest r in [0, target] that fits,
// found by trying every r; when none fits, the empty text (dsh's
// truncateWithNotice starts from { text: ”, omittedBytes: all }).
func specLargestCut(original string, target int) string {
	best := ""
	for r := 0; r <= target; r++ {
		if c := specCut(original, r); len(c) <= target {
			best = c
		}
	}
	return best
}

// specMessage is one message of the reference retention.
type specMessage struct {
	role, original, text string
	checkpoint           bool
	cut                  int
}

// specRetain is §2.3.6–7 written plainly from the contract: sizes are
// measured on the whole serialised data object every time.
func specRetain(t *testing.T, head snapshotData, msgs []projectedMessage, budget int) ([]Turn, Stats, bool) {
	items := make([]specMessage, len(msgs))
	stats := Stats{OriginalMessages: len(msgs)}
	for i, m := range msgs {
		items[i] = specMessage{role: m.role, original: m.original, text: m.original, checkpoint: m.checkpoint}
		stats.Compacted = stats.Compacted || m.checkpoint
	}
	size := func() int {
		d := head
		d.Conversation = []Turn{}
		for _, it := range items {
			d.Conversation = append(d.Conversation, Turn{Role: it.role, Text: it.text})
		}
		b, err := jsjson.MarshalTagSafe(d)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	dropped := 0
	for size() > budget {
		drop := -1
		for i := 0; i < len(items)-1; i++ {
			if !items[i].checkpoint {
				drop = i
				break
			}
		}
		if drop >= 0 {
			stats.OmittedMessages++
			dropped += len(items[drop].original)
			items = append(items[:drop], items[drop+1:]...)
			continue
		}
		longest := -1
		for i := range items {
			if longest < 0 || len(items[i].text) > len(items[longest].text) {
				longest = i
			}
		}
		if longest < 0 || items[longest].text == "" {
			return nil, Stats{}, false
		}
		target := max(0, len(items[longest].text)-(size()-budget))
		cut := specLargestCut(items[longest].original, target)
		if cut == items[longest].text {
			return nil, Stats{}, false
		}
		items[longest].text = cut
		items[longest].cut = len(items[longest].original)
		if k := strings.LastIndex(cut, "\n[… omitted "); k >= 0 {
			items[longest].cut -= k
		}
	}
	conv := make([]Turn, len(items))
	cutBytes := 0
	for i, it := range items {
		conv[i] = Turn{Role: it.role, Text: it.text}
		cutBytes += it.cut
	}
	stats.RetainedMessages = len(items)
	stats.OmittedBytes = int64(dropped + cutBytes)
	stats.Truncated = stats.OmittedMessages > 0 || stats.OmittedBytes > 0
	return conv, stats, true
}

// retentionAlphabet mixes 1- to 4-byte sequences and characters whose
// tag-safe serialisation is longer than their UTF-8.
var retentionAlphabet = []string{"a", "b", " ", "é", "界", "😀", "<", `"`, "\n"}

func randomText(rng *rand.Rand, maxRunes int) string {
	n := rng.Intn(maxRunes + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(retentionAlphabet[rng.Intn(len(retentionAlphabet))])
	}
	return b.String()
}

func TestRetainAgainstSpecBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cwd := "/w"
	seq := int64(9)
	head := snapshotData{SessionID: "s<1>", Label: "label", Cwd: &cwd, CapturedThroughSeq: &seq}
	cases := 0
	for iter := 0; iter < 50; iter++ {
		n := 1 + rng.Intn(5)
		msgs := make([]projectedMessage, n)
		for i := range msgs {
			msgs[i] = projectedMessage{role: dshlog.RoleAssistant, original: randomText(rng, 24)}
			if msgs[i].original == "" {
				msgs[i].original = "x"
			}
			if rng.Intn(2) == 0 {
				msgs[i].role = dshlog.RoleUser
				msgs[i].checkpoint = rng.Intn(3) == 0
			}
		}
		full := head
		for _, m := range msgs {
			full.Conversation = append(full.Conversation, Turn{Role: m.role, Text: m.original})
		}
		fullSize, _ := TagSafeSize(full)
		for budget := 60; budget <= fullSize+2; budget += 1 + rng.Intn(4) {
			cases++
			wantConv, wantStats, wantOK := specRetain(t, head, msgs, budget)
			got, err := retain(head, msgs, budget)
			if !wantOK {
				if err == nil || sessionref.CodeOf(err) != sessionref.CodeBudgetExceeded {
					t.Fatalf("msgs %+v budget %d: got %+v, %v; the contract says BUDGET_EXCEEDED", msgs, budget, got.data.Conversation, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("msgs %+v budget %d: %v; the contract keeps %+v", msgs, budget, err, wantConv)
			}
			if !reflect.DeepEqual(got.data.Conversation, wantConv) || got.stats != wantStats {
				t.Fatalf("msgs %+v budget %d:\n got %+v %+v\nwant %+v %+v", msgs, budget, got.data.Conversation, got.stats, wantConv, wantStats)
			}
			if size, _ := TagSafeSize(got.data); size > budget || size != got.size {
				t.Fatalf("budget %d: result is %d bytes, reported %d", budget, size, got.size)
			}
		}
	}
	t.Logf("%d budgets checked", cases)
}

func TestCutTextLargestFitAndValidUTF8(t *testing.T) {
	originals := []string{
		latestText,
		"ascii only text of some length",
		"é" + strings.Repeat("😀a界", 20) + "é",
		strings.Repeat("😀", 30),
	}
	// Invalid UTF-8 cannot come out of a decoded log; it must still not panic.
	for target := 0; target < 12; target++ {
		cutText("\xff\xfebroken\xe7", target)
	}
	for _, original := range originals {
		for target := 0; target < len(original); target++ { // callers cut only what is over
			got, omitted := cutText(original, target)
			want := specLargestCut(original, target)
			if got != want {
				t.Fatalf("cutText(%q, %d) = %q, want %q", original, target, got, want)
			}
			if utf8.ValidString(original) && !utf8.ValidString(got) {
				t.Fatalf("cutText(%q, %d) = %q splits a UTF-8 sequence", original, target, got)
			}
			if got == "" && omitted == len(original) {
				continue // no cut fits: every byte omitted
			}
			if !strings.HasSuffix(got, omissionMarker(omitted)) {
				t.Fatalf("cutText(%q, %d) = %q does not end with the marker for %d", original, target, got, omitted)
			}
		}
	}
}

func TestRetainDropsOldestNonCheckpointFirst(t *testing.T) {
	msgs := []projectedMessage{
		{role: dshlog.RoleUser, original: "first question"},
		{role: dshlog.RoleUser, original: "checkpoint summary", checkpoint: true},
		{role: dshlog.RoleAssistant, original: "second answer"},
		{role: dshlog.RoleUser, original: "third question"},
		{role: dshlog.RoleAssistant, original: "newest answer"},
	}
	head := snapshotData{SessionID: "s", Label: "s"}
	tests := []struct {
		name      string
		keep      []int // indexes of msgs that remain
		omitted   int
		omitBytes int
	}{
		{"nothing dropped", []int{0, 1, 2, 3, 4}, 0, 0},
		{"oldest dropped", []int{1, 2, 3, 4}, 1, len("first question")},
		{"two dropped, checkpoint kept", []int{1, 3, 4}, 2, len("first question") + len("second answer")},
		{"all droppable gone", []int{1, 4}, 3, len("first question") + len("second answer") + len("third question")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := head
			want.Conversation = []Turn{}
			for _, i := range tt.keep {
				want.Conversation = append(want.Conversation, Turn{Role: msgs[i].role, Text: msgs[i].original})
			}
			budget, err := TagSafeSize(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := retain(head, msgs, budget)
			if err != nil {
				t.Fatalf("retain: %v", err)
			}
			if !reflect.DeepEqual(got.data.Conversation, want.Conversation) {
				t.Errorf("kept %+v, want %+v", got.data.Conversation, want.Conversation)
			}
			if got.stats.OmittedMessages != tt.omitted || got.stats.OmittedBytes != int64(tt.omitBytes) {
				t.Errorf("stats %+v, want %d messages and %d bytes omitted", got.stats, tt.omitted, tt.omitBytes)
			}
			if got.stats.Truncated != (tt.omitted > 0) || !got.stats.Compacted {
				t.Errorf("stats %+v", got.stats)
			}
		})
	}
}

func TestBudgetFormula(t *testing.T) {
	tests := []struct {
		name string
		lim  Limits
		want int
	}{
		{"default", Limits{}, 65536},
		{"explicit bytes", Limits{MaxReferenceBytes: 1000}, 1000},
		{"explicit bytes beat the window", Limits{MaxReferenceBytes: 1000, ContextWindow: 1_000_000}, 1000},
		{"small window floors at 65536", Limits{ContextWindow: 8000}, 65536},
		{"window at the floor", Limits{ContextWindow: 81920}, 65536},
		{"window above the floor", Limits{ContextWindow: 100_000}, 80000},
		{"floor of a fraction", Limits{ContextWindow: 100_001}, 80000},
		{"custom fraction", Limits{ContextWindow: 200_000, ReferenceContextFraction: 0.5}, 400000},
		{"fraction 0.3", Limits{ContextWindow: 100_000, ReferenceContextFraction: 0.3}, 120000},
		{"fraction 1", Limits{ContextWindow: 1_000_000, ReferenceContextFraction: 1}, 4_000_000},
		{"fraction without window", Limits{ReferenceContextFraction: 0.5}, 65536},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Budget(tt.lim); got != tt.want {
				t.Errorf("Budget(%+v) = %d, want %d", tt.lim, got, tt.want)
			}
		})
	}
}

func TestRetainCutsFirstLongestOnTies(t *testing.T) {
	msgs := []projectedMessage{
		{role: dshlog.RoleUser, original: strings.Repeat("a", 200), checkpoint: true},
		{role: dshlog.RoleAssistant, original: strings.Repeat("b", 200)},
	}
	head := snapshotData{SessionID: "s", Label: "s"}
	for budget := 200; budget <= 480; budget += 7 {
		got, err := retain(head, msgs, budget)
		wantConv, wantStats, ok := specRetain(t, head, msgs, budget)
		if !ok {
			if sessionref.CodeOf(err) != sessionref.CodeBudgetExceeded {
				t.Fatalf("budget %d: %v, want BUDGET_EXCEEDED", budget, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got.data.Conversation, wantConv) || got.stats != wantStats {
			t.Fatalf("budget %d: got %+v %+v %v\nwant %+v %+v", budget, got.data.Conversation, got.stats, err, wantConv, wantStats)
		}
	}
	// The first of the two longest is cut first, so it ends up the shorter:
	// the marker's "\n" serialises to two bytes, so the other is then cut
	// by the one byte still over.
	full := head
	full.Conversation = []Turn{{dshlog.RoleUser, msgs[0].original}, {dshlog.RoleAssistant, msgs[1].original}}
	size, _ := TagSafeSize(full)
	got, err := retain(head, msgs, size-50)
	if err != nil {
		t.Fatal(err)
	}
	if conv := got.data.Conversation; len(conv[0].Text) >= len(conv[1].Text) {
		t.Errorf("on a tie the later message was cut first: %+v", conv)
	}
}
