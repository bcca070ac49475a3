package dshlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// MaxReadableVersion is the newest log format version this package reads
// for preparation. Newer logs are listed from their header and title only.
const MaxReadableVersion = 4

// Header is line 1 of a session log (§1.3).
type Header struct {
	Version         int
	ID              string
	CreatedAt       int64
	Cwd             string
	HasCwd          bool
	ParentSession   string
	Origin          string
	DelegationDepth int
	AgentPreset     string
	// HasDelegationDepth and HasIsSeeded say whether the keys were present:
	// format v4 requires both (SPEC §1.7).
	HasDelegationDepth bool
	HasIsSeeded        bool
	// Seeded says the log starts with events inherited from
	// ParentSession: isSeeded true (v2+), or a seedLength above 0 (v0, v1).
	Seeded bool
}

type rawHeader struct {
	Type            *string          `json:"type"`
	Version         *json.Number     `json:"version"`
	ID              *string          `json:"id"`
	CreatedAt       *json.Number     `json:"createdAt"`
	Cwd             *string          `json:"cwd"`
	ParentSession   *string          `json:"parentSession"`
	Origin          *string          `json:"origin"`
	DelegationDepth *json.Number     `json:"delegationDepth"`
	AgentPreset     *string          `json:"agentPreset"`
	SeedLength      *json.RawMessage `json:"seedLength"`
	IsSeeded        *bool            `json:"isSeeded"`
}

// ParseHeader decodes and validates a header line.
func ParseHeader(line []byte) (Header, error) {
	raw, err := decodeRawHeader(line)
	if err != nil {
		return Header{}, err
	}
	return headerOf(raw)
}

// decodeRawHeader decodes the first JSON value of line: what follows it
// is not looked at. A line that is that value alone, as every header dsh
// writes, decodes the same with json.Unmarshal, which needs no Decoder and
// no copy of the line (a Decoder per header was 83 MB of a recall first
// build's allocations at 100,000 sessions); any other line goes through
// the Decoder (FuzzDecodeRawHeader holds the two to the same answers).
func decodeRawHeader(line []byte) (rawHeader, error) {
	var raw rawHeader
	if json.Unmarshal(line, &raw) == nil {
		return raw, nil
	}
	raw = rawHeader{}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return rawHeader{}, fmt.Errorf("header is not a JSON object: %w", err)
	}
	return raw, nil
}

// headerOf validates the decoded values of a header line.
func headerOf(raw rawHeader) (Header, error) {
	if raw.Type == nil || *raw.Type != "session" {
		return Header{}, errors.New(`header type is not "session"`)
	}
	var h Header
	var err error
	if raw.Version == nil {
		return Header{}, errors.New("header has no version")
	}
	if h.Version, err = nonNegativeInt(*raw.Version, "version"); err != nil {
		return Header{}, err
	}
	if raw.ID == nil || *raw.ID == "" {
		return Header{}, errors.New("header has no id")
	}
	h.ID = *raw.ID
	if raw.CreatedAt == nil {
		return Header{}, errors.New("header has no createdAt")
	}
	created, err := nonNegativeInt(*raw.CreatedAt, "createdAt")
	if err != nil {
		return Header{}, err
	}
	h.CreatedAt = int64(created)
	// Recorded logs sometimes lack delegationDepth; it reads as 0.
	if raw.DelegationDepth != nil {
		h.HasDelegationDepth = true
		if h.DelegationDepth, err = nonNegativeInt(*raw.DelegationDepth, "delegationDepth"); err != nil {
			return Header{}, err
		}
	}
	if raw.Cwd != nil {
		h.Cwd, h.HasCwd = *raw.Cwd, true
	}
	if raw.ParentSession != nil {
		h.ParentSession = *raw.ParentSession
	}
	if raw.Origin != nil {
		h.Origin = *raw.Origin
	}
	if raw.AgentPreset != nil {
		h.AgentPreset = *raw.AgentPreset
	}
	h.HasIsSeeded = raw.IsSeeded != nil
	h.Seeded = raw.IsSeeded != nil && *raw.IsSeeded || positiveNumber(raw.SeedLength)
	return h, nil
}

// checkReadable refuses, for preparation, a header this package lists but
// does not read: a newer format version, or a v4 header without the keys
// v4 requires.
func (h Header) checkReadable() error {
	if h.Version > MaxReadableVersion {
		return &NewerVersionError{Version: h.Version}
	}
	if h.Version == 4 && !h.HasIsSeeded {
		return errors.New("format v4 header lacks the required key isSeeded (a boolean)")
	}
	if h.Version == 4 && !h.HasDelegationDepth {
		return errors.New("format v4 header lacks the required key delegationDepth")
	}
	return nil
}

// headerVersion reads only the version of a header line that does not
// parse as a whole: dsh checks the version first, so a newer log is
// reported as newer, never as corrupt.
func headerVersion(line []byte) (int, bool) {
	var v struct {
		Version *json.Number `json:"version"`
	}
	if json.Unmarshal(line, &v) != nil || v.Version == nil {
		return 0, false
	}
	n, err := nonNegativeInt(*v.Version, "version")
	return n, err == nil
}

// positiveNumber reports whether raw is a JSON number above 0.
func positiveNumber(raw *json.RawMessage) bool {
	var f float64
	return raw != nil && json.Unmarshal(*raw, &f) == nil && f > 0
}

func nonNegativeInt(n json.Number, field string) (int, error) {
	v, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != math.Trunc(f) {
			return 0, fmt.Errorf("header %s is not an integer", field)
		}
		v = int64(f)
	}
	if v < 0 {
		return 0, fmt.Errorf("header %s %d is negative", field, v)
	}
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("header %s %d is out of range", field, v)
	}
	return int(v), nil
}
