package recall

import "hash/maphash"

// idTable finds a dictionary token's id by its bytes: an open-addressing
// table of ids plus one (0: an empty slot), at most half full, whose
// tokens are the dictionary's list. A Go map of the tokens kept a string
// header and an id per entry, with its spare room about 28 bytes per
// token; this keeps two to four slots of 4 bytes (BenchmarkSearchVocabulary).
type idTable struct {
	seed  maphash.Seed
	slots []uint32
	used  int
}

func newIDTable() idTable { return idTable{seed: maphash.MakeSeed(), slots: make([]uint32, 64)} }

// find returns the id of tok among tokens, the list the table indexes.
func (t *idTable) find(tokens []string, tok string) (uint32, bool) {
	mask := uint64(len(t.slots) - 1)
	for j := maphash.String(t.seed, tok) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s == 0 {
			return 0, false
		}
		if tokens[s-1] == tok {
			return s - 1, true
		}
	}
}

// add records id, whose token tokens[id] the table does not hold yet.
func (t *idTable) add(tokens []string, id uint32) {
	if (t.used+1)*2 > len(t.slots) {
		old := t.slots
		t.slots = make([]uint32, 2*len(old))
		for _, s := range old {
			if s != 0 {
				t.put(tokens[s-1], s-1)
			}
		}
	}
	t.put(tokens[id], id)
	t.used++
}

// put writes id, whose token is tok, to the first empty slot from tok's.
func (t *idTable) put(tok string, id uint32) {
	mask := uint64(len(t.slots) - 1)
	j := maphash.String(t.seed, tok) & mask
	for t.slots[j] != 0 {
		j = (j + 1) & mask
	}
	t.slots[j] = id + 1
}
