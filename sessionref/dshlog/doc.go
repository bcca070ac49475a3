// Package dshlog is what dsh writes on disk, read as dsh reads it: the
// session store's layout (its naming rules are sessionref/dshlog/layout),
// opening a log as a regular file only, and reading a log's complete
// lines, raw or zstd (§1.2, §1.7: frames walked and decoded with bounded
// memory, torn tails, corrupt frames, over-long lines). It is the layer a
// new log format of dsh changes; the headers, events and projection above
// it are still in sessionref.
package dshlog
