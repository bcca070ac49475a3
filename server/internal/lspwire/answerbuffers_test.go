package lspwire

import (
	"bytes"
	"context"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func TestAnswerBuffersLendAndTakeBack(t *testing.T) {
	var a AnswerBuffers
	first, s1 := a.Get(100)
	if s1 < 0 || cap(first) < 100 || len(first) != 0 {
		t.Fatalf("get(100) = len %d cap %d slot %d", len(first), cap(first), s1)
	}
	answer := append(first, `{"a":1}`...)
	a.Settle(s1, answer)
	second, s2 := a.Get(100)
	if s2 == s1 || sameArray(second, first) {
		t.Fatalf("a lent array was lent again before it came back (slots %d, %d)", s1, s2)
	}
	a.Settle(s2, nil) // its encoding failed: the slot is free again

	a.GiveBack([]byte(`{"a":1}`)) // not an array of a slot: ignored
	if again, s := a.Get(100); s == s1 || sameArray(again, first) {
		t.Fatal("giveBack of another array freed a slot")
	} else {
		a.Settle(s, nil)
	}
	a.GiveBack(answer)
	if again, s := a.Get(100); s != s1 || !sameArray(again, first) {
		t.Fatalf("after giveBack, get returned slot %d, not the array given back (slot %d)", s, s1)
	} else {
		a.Settle(s, nil)
	}
}

func TestAnswerBuffersGrownAnswers(t *testing.T) {
	var a AnswerBuffers
	dst, slot := a.Get(16)
	grown := append(dst, make([]byte, 8<<10)...) // past the lent capacity: a new array
	a.Settle(slot, grown)
	a.GiveBack(grown)
	if again, s := a.Get(8 << 10); s != slot || !sameArray(again, grown) {
		t.Fatalf("the slot did not take the grown answer's array (slot %d, want %d)", s, slot)
	} else {
		a.Settle(s, nil)
	}
	dst, slot = a.Get(16)
	huge := append(dst, make([]byte, KeptAnswerBytes+1)...)
	a.Settle(slot, huge) // too large to keep: the slot is free at once
	if again, s := a.Get(16); s != slot || sameArray(again, huge) {
		t.Fatalf("after a huge answer: slot %d (want %d), the huge array kept: %v", s, slot, sameArray(again, huge))
	}
	if b, s := a.Get(KeptAnswerBytes + 1); s != -1 || cap(b) < KeptAnswerBytes+1 {
		t.Fatalf("get of more than KeptAnswerBytes lent slot %d", s)
	}
}

func TestAnswerBuffersAllLent(t *testing.T) {
	var a AnswerBuffers
	seen := map[int]bool{}
	for range answerSlots {
		_, s := a.Get(10)
		if s < 0 || seen[s] {
			t.Fatalf("slot %d lent twice or none free", s)
		}
		seen[s] = true
	}
	if b, s := a.Get(10); s != -1 || cap(b) < 10 {
		t.Fatalf("with every slot lent, get returned slot %d", s)
	}
}

// TestStreamGivesAnswersBack: the stream hands every held answer's result
// to Hooks.Written once Write is done with it, written or not, and the
// answer on the wire is the one encoded into the lent array.
func TestStreamGivesAnswersBack(t *testing.T) {
	var a AnswerBuffers
	rwc := &memRWC{r: bytes.NewReader(nil)}
	s := New(rwc, Hooks{Written: a.GiveBack})
	dst, slot := a.Get(64)
	raw := append(dst, `{"ok":true}`...)
	a.Settle(slot, raw)
	if _, err := s.Write(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(7), jsonrpc2.RawMessage(s.Hold(Encoded(raw))), nil)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rwc.w.Bytes(), []byte(`"result":{"ok":true}`)) {
		t.Fatalf("written %q, want the encoded answer", rwc.w.Bytes())
	}
	if again, s2 := a.Get(64); s2 != slot || !sameArray(again, raw) {
		t.Fatalf("after Write the answer's slot %d was not free (got slot %d)", slot, s2)
	} else {
		a.Settle(s2, nil)
	}

	// A Write whose context has ended writes nothing, and gives the
	// answer back all the same.
	dst, slot = a.Get(64)
	raw = append(dst, `{"late":true}`...)
	a.Settle(slot, raw)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(8), jsonrpc2.RawMessage(s.Hold(Encoded(raw))), nil)); err == nil {
		t.Fatal("Write with an ended context succeeded")
	}
	if bytes.Contains(rwc.w.Bytes(), []byte("late")) {
		t.Fatal("an answer was written after its context ended")
	}
	if _, s2 := a.Get(64); s2 != slot {
		t.Fatalf("a dropped answer's slot %d was not given back (got slot %d)", slot, s2)
	}
}

// TestAnswerBuffersIgnoreArraysOfTheirOwn: an array get handed out as the
// caller's own (slot -1) and an empty answer leave every slot as it was.
func TestAnswerBuffersIgnoreArraysOfTheirOwn(t *testing.T) {
	var a AnswerBuffers
	dst, slot := a.Get(10)
	a.Settle(slot, append(dst, '1'))
	own, none := a.Get(KeptAnswerBytes + 1)
	a.Settle(none, append(own, '2'))
	a.GiveBack(nil)
	a.GiveBack(own)
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, sl := range a.slots {
		if sl.lent != (i == slot) {
			t.Errorf("slot %d lent %v; only slot %d was lent", i, sl.lent, slot)
		}
	}
}
