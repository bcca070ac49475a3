package prepare

import (
	"context"
	"encoding/json"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// BoundedSnapshot is one source as preparation bounds it: the data object
// that goes into the prompt and its stats.
type BoundedSnapshot struct {
	Data  json.RawMessage `json:"data"`
	Stats Stats           `json:"stats"`
}

// SnapshotOf, for the tests, reads one session and bounds it to budget bytes, exactly as
// preparation does for that reference without Limits.RedactSecrets (it
// never redacts). Its data is the JS serialisation.
func SnapshotOf(ctx context.Context, loc Locator, ref sessionref.Reference, budget int) (*BoundedSnapshot, error) {
	if ref.Label == "" && !ref.EmptyLabel {
		ref.Label = ref.SessionID
	}
	data, _, msgs, err := readSource(ctx, loc, ref, &dshlog.FrameDecoder{Concurrency: 1})
	if err != nil {
		return nil, err
	}
	bounded, err := retain(data, msgs, budget)
	if err != nil {
		return nil, err
	}
	return &BoundedSnapshot{Data: appendSnapshot(nil, bounded.data, false), Stats: bounded.stats}, nil
}

// TagSafeSize, for the tests, is the size of v's tag-safe serialisation.
func TagSafeSize(v any) (int, error) {
	b, err := jsjson.MarshalTagSafe(v)
	return len(b), err
}

// ReadReferenced, for the tests, reads entry's session as preparation
// reads a reference, failing with the contract's *Error.
var ReadReferenced = readReferenced
