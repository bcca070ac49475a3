// Package dshgen writes dsh session stores for tests, demos and benchmarks.
//
// A Session builds one log event by event, exactly in the shapes dsh writes
// (SPEC §1): the header, user and assistant messages in their current and
// legacy shapes, compaction checkpoints, titles, subagent descriptors, packed
// chunk rows, plain and ignorable events. Save writes it where dsh would —
// <root>/--<projectKey(cwd)>--/<encodeSegment(id)>/session.jsonl, or
// session.jsonl.zstd with one zstd frame per append batch — and Append adds
// later events the way dsh appends them.
//
// While building, the Session also folds the surface and projects the
// conversation independently of the bytes it writes, so Expected tells a test
// what a correct reader must find: title, display title, last seq, projected
// conversation, compacted flag.
//
// The adversarial constructors (UnparsableBeforeTurnEnd, TornTail,
// ChecksumFailure, HugeLine, ...) write damaged or unusual entries, each with
// the behaviour SPEC requires of a reader. DemoStore writes a small
// believable store; BenchStore writes thousands of sessions for benchmarks.
//
// Directory names come from layout.EncodeSegment and
// layout.ProjectDir, so generator and reader agree by construction; the
// package's tests pin them to SPEC's examples and to the recorded fixtures.
package dshgen
