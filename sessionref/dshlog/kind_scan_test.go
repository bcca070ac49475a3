package dshlog

import (
	"encoding/json"
	"strings"
	"testing"
)

// promptLines are user message lines of every shape promptOf reads, and
// shapes it must not be fooled by.
var promptLines = []string{
	`{"type":"user/message","seq":1,"time":5,"data":{"content":[{"type":"text","text":"Fix it"}],"source":{"kind":"user"},"role":"user","id":"m"},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":1,"time":5,"data":{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"plugin","plugin":"webhook"},"role":"user","id":"m"},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":1,"time":5,"data":{"content":[],"source":{"kind":"webhook","provider":"github"},"role":"user"},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":1,"time":5,"data":{"content":[{"type":"text","text":"no source"}],"role":"user"}}`,
	`{"type":"steering/message","seq":3,"time":5,"data":{"turn":1,"message":{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}}}`,
	`{"type":"steering/message","seq":3,"time":5,"data":{"turn":1,"message":{"content":"x"}}}`,
	`{"type":"user/message","data":{"source":{"kind":"plugin","plugin":"compact"},"content":[{"type":"tool-result","source":{"kind":"user"}}]}}`,
	`{"type":"user/message","data":{"content":[{"type":"text","text":"\"source\":{\"kind\":\"user\"} \\\" and \\\\"}],"source":{"kind":"runtime-context"}}}`,
	`{"type":"user/message","data":{"source":null,"content":[]}}`,
	`{"type":"user/message","data":{"source":"user","content":[]}}`,
	`{"type":"user/message","data":{"Source":{"kind":"user"},"content":[]}}`,
	`{"type":"user/message","data":{"source":{"kind":"x","plugin":"webhook"},"source":{"kind":"plugin"}}}`,
	`{"type":"user/message","data":{"message":{"source":{"kind":"user"}},"message":{}}}`,
	`{"type":"user/message","data":{"message":null,"source":{"kind":"user"}}}`,
	`{"type":"user/message","data":null}`,
	`{"type":"user/message","data":{"content":[1,2.5e3,true,false,null,{"a":[{}]}],"source":{"kind":"user"}}}`,
	` { "type" : "user/message" , "data" : { "source" : { "kind" : "user" } } } `,
	`{"data":{"source":{"kind":"user"}}} trailing`,
	`{"data":{"source":{"kind":"user"}}`,
	`[{"data":{}}]`,
}

// TestPromptFastAgrees holds promptFast to promptOf on every line above,
// as v0 and as v4, wherever it answers, and checks it answers dsh's usual
// shapes without falling back.
func TestPromptFastAgrees(t *testing.T) {
	for i, line := range promptLines {
		for _, v4 := range []bool{false, true} {
			p, ok := promptFast([]byte(line), v4)
			if ok && json.Valid([]byte(line)) && p != promptOf([]byte(line), v4) {
				t.Errorf("line %d, v4 %v: promptFast %v, promptOf %v", i, v4, p, promptOf([]byte(line), v4))
			}
			if !ok && i < 6 {
				t.Errorf("line %d, v4 %v: dsh's shape fell back to promptOf", i, v4)
			}
		}
	}
}

// FuzzPromptFast: on valid JSON, promptFast either leaves the line to
// promptOf or answers what promptOf answers.
func FuzzPromptFast(f *testing.F) {
	for _, l := range promptLines {
		f.Add([]byte(l), false)
		f.Add([]byte(l), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, v4 bool) {
		p, ok := promptFast(line, v4)
		if ok && json.Valid(line) && p != promptOf(line, v4) {
			t.Fatalf("%q (v4 %v): promptFast %v, promptOf %v", line, v4, p, promptOf(line, v4))
		}
	})
}

// BenchmarkPromptOfFirstMessage compares the two readings of a first
// prompt of 4.6 KB, the size of the bench store's (dshgen BenchStore).
func BenchmarkPromptOfFirstMessage(b *testing.B) {
	text := strings.Repeat("refactor the parser and retry the deploy; ", 110)
	line := []byte(`{"type":"user/message","seq":1,"time":1767517902882,"data":{"content":[{"type":"text","text":"` + text +
		`"}],"source":{"kind":"user"},"role":"user","id":"5f0c2a9e-8f5b-4f7c-9d3e-2a1b0c9d8e7f"},"surfaceOp":"append"}`)
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for i := 0; i < b.N; i++ {
			if promptOf(line, false) != PromptPerson {
				b.Fatal("not a person's prompt")
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for i := 0; i < b.N; i++ {
			if p, ok := promptFast(line, false); !ok || p != PromptPerson {
				b.Fatal("not a person's prompt")
			}
		}
	})
}
