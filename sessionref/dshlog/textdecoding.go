package dshlog

import "github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

// textDecoding says how message text is decoded from its JSON token.
type textDecoding uint8

const (
	// textCopy decodes into a buffer of the text's own (DecodeText).
	textCopy textDecoding = iota
	// textInPlace decodes over the token's own bytes, whose buffer the
	// caller gives away (DecodeTextInPlace).
	textInPlace
	// textReference decodes a rune at a time, and message data with
	// encoding/json: the reading the faster paths are tested against.
	textReference
	// textInArena decodes into a Arena the scan holds (jsjson.Arena.Text,
	// jsjson.Arena.Join).
	textInArena
)

// decoder is the function that decodes a text token the way d says.
func (d textDecoding) decoder() func([]byte) (string, bool) {
	switch d {
	case textInPlace:
		return jsjson.DecodeTextInPlace
	case textReference:
		return jsjson.DecodeTextRunes
	}
	return jsjson.DecodeText
}
