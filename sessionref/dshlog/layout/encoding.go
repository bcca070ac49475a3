package layout

// Encoding says how a log file is stored.
type Encoding string

// The two physical encodings of §1.2.
const (
	EncodingRaw  Encoding = "jsonl"
	EncodingZstd Encoding = "zstd"
)
