package sessionref

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// URIScheme starts every session URI (SPEC §2.1).
const URIScheme = "dsh-session:"

// uriPayloadEncoding is base64url without padding. Strict refuses non-zero
// trailing bits; canonicality is checked again by re-encoding.
var uriPayloadEncoding = base64.RawURLEncoding.Strict()

// Reasons a URI is refused; DecodeURI wraps them in an *Error.
var (
	errURIScheme    = errors.New("missing the " + URIScheme + " prefix")
	errURIEmpty     = errors.New("empty payload")
	errURIAlphabet  = errors.New("payload has characters outside [A-Za-z0-9_-]")
	errURIBase64    = errors.New("payload is not unpadded base64url")
	errURIUTF8      = errors.New("payload is not valid UTF-8")
	errURINotString = errors.New("payload is not exactly one JSON string")
	errURINotCanon  = errors.New("payload is not the canonical encoding of its id")
)

// EncodeURI returns the session URI of id: URIScheme followed by the
// unpadded base64url encoding of the UTF-8 bytes of JSON.stringify(id).
// Invalid UTF-8 bytes of id are encoded as U+FFFD, as AppendJSString does,
// so DecodeURI(EncodeURI(id)) is id with those bytes replaced.
func EncodeURI(id string) string {
	var scratch uriScratch
	payload := scratch.payload(id)
	var b strings.Builder
	b.Grow(len(URIScheme) + len(payload))
	b.WriteString(URIScheme)
	b.Write(payload)
	return b.String()
}

// AppendURIPayload appends the payload of id's URI, what EncodeURI writes
// after URIScheme (base64url, so JSON needs no escape in it), for a
// caller that writes a URI or mention into a larger buffer without the
// string EncodeURI or Mention allocates.
func AppendURIPayload(dst []byte, id string) []byte {
	var scratch uriScratch
	return append(dst, scratch.payload(id)...)
}

// uriScratch holds the JSON string and the base64url payload of an id's
// URI on the stack while they are built, so that a URI costs one
// allocation, the result's (ids of up to ~90 bytes; a longer one spills
// to the heap).
type uriScratch struct {
	js  [96]byte
	enc [128]byte
}

// payload returns the base64url payload of id's URI, in sc.
func (sc *uriScratch) payload(id string) []byte {
	js := AppendJSString(sc.js[:0], id)
	return uriPayloadEncoding.AppendEncode(sc.enc[:0], js)
}

// DecodeURI returns the session id a URI names. It requires the
// URIScheme prefix, a non-empty payload of [A-Za-z0-9_-], base64url that
// decodes to valid UTF-8 holding one JSON string, and canonicality:
// EncodeURI of the id must give uri byte for byte (no padding, no other
// alphabet, no stray trailing bits, no needless escapes such as "\u0061",
// no whitespace around the string). Failures are an *Error with
// CodeInvalidReference.
func DecodeURI(uri string) (string, error) {
	id, err := decodeURI(uri)
	if err != nil {
		return "", &Error{Code: CodeInvalidReference, Message: "malformed session URI " + quoteForMessage(uri), Err: err}
	}
	return id, nil
}

// decodeURI does the work of DecodeURI and returns the bare reason.
func decodeURI(uri string) (string, error) {
	payload, ok := strings.CutPrefix(uri, URIScheme)
	if !ok {
		return "", errURIScheme
	}
	if payload == "" {
		return "", errURIEmpty
	}
	for i := 0; i < len(payload); i++ {
		if !isBase64URLByte(payload[i]) {
			return "", errURIAlphabet
		}
	}
	js, err := uriPayloadEncoding.DecodeString(payload)
	if err != nil {
		return "", errURIBase64
	}
	if !utf8.Valid(js) {
		return "", errURIUTF8
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return "", errURINotString
	}
	id, ok := v.(string)
	if !ok {
		return "", errURINotString
	}
	if !bytes.Equal(AppendJSString(make([]byte, 0, len(js)), id), js) {
		return "", errURINotCanon
	}
	// The JSON is canonical, so the base64 text is too unless it differs in
	// a way Strict decoding tolerates; compare to be sure.
	if EncodeURI(id) != uri {
		return "", errURINotCanon
	}
	return id, nil
}

// isBase64URLByte reports whether c is in [A-Za-z0-9_-].
func isBase64URLByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// maxQuotedInMessage caps how much of a bad URI or mention an error
// message repeats, so a megabyte of garbage does not become the message.
const maxQuotedInMessage = 200

// quoteForMessage quotes s for an error message, shortened when long.
func quoteForMessage(s string) string {
	if len(s) <= maxQuotedInMessage {
		return strconv.Quote(s)
	}
	cut := maxQuotedInMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
