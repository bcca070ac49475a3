package sessionref

import "github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

// AppendJSString appends s as JavaScript's JSON.stringify(s) writes it,
// quotes included (invalid UTF-8 bytes as U+FFFD, one each): the bytes of
// an id in a dsh-session: URI, and of the strings a dsh log holds.
func AppendJSString(dst []byte, s string) []byte { return jsjson.AppendString(dst, s) }

// MarshalJSIndent returns v laid out as JSON.stringify(v, null, 2) writes
// it, what the CLI prints.
func MarshalJSIndent(v any) ([]byte, error) { return jsjson.MarshalIndent(v) }
