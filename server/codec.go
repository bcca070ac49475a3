package server

import (
	"bytes"
	"encoding/json"
)

// jsonCodec is the payload codec of the connection: encoding/json, without
// HTML escaping, so results are written exactly as the contract spells them.
type jsonCodec struct{}

// Marshal implements jsonrpc2.Codec.
func (jsonCodec) Marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw == nil {
			return []byte("null"), nil
		}
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Unmarshal implements jsonrpc2.Codec.
func (jsonCodec) Unmarshal(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = bytes.Clone(data)
		return nil
	}
	return json.Unmarshal(data, v)
}
