package dshlog

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decoderHeader is how header lines were decoded before decodeRawHeader
// tried json.Unmarshal first: the first JSON value of the line through a
// json.Decoder. The two must agree on every line, header or not.
func decoderHeader(line []byte) (rawHeader, error) {
	var raw rawHeader
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return rawHeader{}, err
	}
	return raw, nil
}

const fullHeader = `{"type":"session","version":4,"id":"s1","createdAt":1700000000000,"cwd":"/w","parentSession":"p","origin":"o","delegationDepth":1,"agentPreset":"a","seedLength":3,"isSeeded":true}`

func TestParseHeaderDecodesTheFirstValue(t *testing.T) {
	want := Header{Version: 4, ID: "s1", CreatedAt: 1700000000000, Cwd: "/w", HasCwd: true, ParentSession: "p",
		Origin: "o", DelegationDepth: 1, AgentPreset: "a", HasDelegationDepth: true, HasIsSeeded: true, Seeded: true}
	for _, tt := range []struct{ name, line string }{
		{name: "the value alone", line: fullHeader},
		{name: "a value then more on the line", line: fullHeader + ` {"type":"x"} trailing`},
		{name: "white space around", line: " \t" + fullHeader + " \r"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(tt.line))
			if err != nil || h != want {
				t.Errorf("parseHeader(%q) = %+v, %v; want %+v", tt.line, h, err, want)
			}
		})
	}
	for _, line := range []string{`[1,2]`, `{"type":"session","version":-4,"id":"s","createdAt":1}`, fullHeader[:40], ``, `nul`} {
		if h, err := ParseHeader([]byte(line)); err == nil {
			t.Errorf("parseHeader(%q) = %+v, want an error", line, h)
		}
	}
}

// FuzzDecodeRawHeader holds decodeRawHeader to the Decoder's answers: the
// same lines taken, with the same values.
func FuzzDecodeRawHeader(f *testing.F) {
	f.Add([]byte(fullHeader))
	f.Add([]byte(`{"type":"session","version":4,"id":"a","createdAt":5,"delegationDepth":0,"isSeeded":false} x`))
	f.Add([]byte(`{"type":"session","version":1e2,"id":"a","createdAt":5}`))
	f.Add([]byte(`{"type":"session","id":"\u0061","version":2,"createdAt":-1,"seedLength":[1]}`))
	f.Add([]byte(`{"version":"2"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := decodeRawHeader(line)
		want, wantErr := decoderHeader(line)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("line %q: decodeRawHeader error %v, the Decoder's %v", line, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q: decodeRawHeader %+v, the Decoder %+v", line, got, want)
		}
	})
}
