package server

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeQueryParams compares decodeQueryParams with encoding/json on
// the params typing sends, on every shape the direct reading must leave to
// encoding/json (escapes, other bytes, other members, blanks, other
// values), and on invalid params.
func TestDecodeQueryParams(t *testing.T) {
	inputs := []string{
		`{"query":"Refactor session i"}`, `{"query":""}`, `{"query":" ~!#$%&'()*+,-./09:;<=>?@AZ[]^_` + "`" + `az{|}"}`,
		`{"query":"a\"b"}`, `{"query":"a\\b"}`, `{"query":"\u0041"}`, `{"query":"é"}`, "{\"query\":\"\xff\"}",
		"{\"query\":\"a\tb\"}", "{\"query\":\"\x7f\"}", `{"query":"a","limit":3}`, `{"query":"a","limit":"3"}`,
		`{"limit":2,"query":"a"}`, `{"query":"a","query":"b"}`, ` {"query":"a"}`, `{"query":"a"} `, `{ "query":"a"}`,
		`{"query": "a"}`, `{"Query":"a"}`, `{"query":"a"}}`, `{"query":"a"`, `{"query":"}`, `{"query":"a"}x`,
		`{"query":1}`, `{"query":null}`, `null`, `[]`, `{}`, ``, `"x"`,
	}
	for _, in := range inputs {
		var got, want queryParams
		gotErr := decodeQueryParams([]byte(in), &got)
		wantErr := json.Unmarshal([]byte(in), &want)
		if (gotErr != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeQueryParams(%q) = %+v, %v; encoding/json %+v, %v", in, got, gotErr, want, wantErr)
		}
	}
}
