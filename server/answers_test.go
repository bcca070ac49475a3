package server

import "testing"

func TestAnswerBuffersLendAndTakeBack(t *testing.T) {
	var a answerBuffers
	first, s1 := a.get(100)
	if s1 < 0 || cap(first) < 100 || len(first) != 0 {
		t.Fatalf("get(100) = len %d cap %d slot %d", len(first), cap(first), s1)
	}
	answer := append(first, `{"a":1}`...)
	a.settle(s1, answer)
	second, s2 := a.get(100)
	if s2 == s1 || sameArray(second, first) {
		t.Fatalf("a lent array was lent again before it came back (slots %d, %d)", s1, s2)
	}
	a.settle(s2, nil) // its encoding failed: the slot is free again

	a.giveBack([]byte(`{"a":1}`)) // not an array of a slot: ignored
	if again, s := a.get(100); s == s1 || sameArray(again, first) {
		t.Fatal("giveBack of another array freed a slot")
	} else {
		a.settle(s, nil)
	}
	a.giveBack(answer)
	if again, s := a.get(100); s != s1 || !sameArray(again, first) {
		t.Fatalf("after giveBack, get returned slot %d, not the array given back (slot %d)", s, s1)
	} else {
		a.settle(s, nil)
	}
}

func TestAnswerBuffersGrownAnswers(t *testing.T) {
	var a answerBuffers
	dst, slot := a.get(16)
	grown := append(dst, make([]byte, 8<<10)...) // past the lent capacity: a new array
	a.settle(slot, grown)
	a.giveBack(grown)
	if again, s := a.get(8 << 10); s != slot || !sameArray(again, grown) {
		t.Fatalf("the slot did not take the grown answer's array (slot %d, want %d)", s, slot)
	} else {
		a.settle(s, nil)
	}
	dst, slot = a.get(16)
	huge := append(dst, make([]byte, keepAnswerBytes+1)...)
	a.settle(slot, huge) // too large to keep: the slot is free at once
	if again, s := a.get(16); s != slot || sameArray(again, huge) {
		t.Fatalf("after a huge answer: slot %d (want %d), the huge array kept: %v", s, slot, sameArray(again, huge))
	}
	if b, s := a.get(keepAnswerBytes + 1); s != -1 || cap(b) < keepAnswerBytes+1 {
		t.Fatalf("get of more than keepAnswerBytes lent slot %d", s)
	}
}

func TestAnswerBuffersAllLent(t *testing.T) {
	var a answerBuffers
	seen := map[int]bool{}
	for range answerSlots {
		_, s := a.get(10)
		if s < 0 || seen[s] {
			t.Fatalf("slot %d lent twice or none free", s)
		}
		seen[s] = true
	}
	if b, s := a.get(10); s != -1 || cap(b) < 10 {
		t.Fatalf("with every slot lent, get returned slot %d", s)
	}
}
