// Package dshlog is what dsh writes on disk, read as dsh reads it: the
// session store's layout (its naming rules are sessionref/dshlog/layout),
// opening a log as a regular file only, reading its complete lines, raw or
// zstd (§1.2, §1.7: frames walked and decoded with bounded memory, torn
// tails, corrupt frames, over-long lines), headers, the v0–v4 events and
// the rules dsh applies to them, closers, and the surface projection of
// §2.3.3. A new log format of dsh touches this package only.
package dshlog
