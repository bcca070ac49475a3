// Package dshlog reads what dsh writes on disk, as dsh reads it: the
// session store's layout, headers, lines raw and zstd, the v0–v4 events
// and their rules, closers, and the surface projection.
//
// A new log format of dsh touches this package only. Lines are read with
// bounded memory (SPEC §1.2, §1.7: torn tails, corrupt frames, over-long
// lines), a log is opened as a regular file only, and the store's naming
// rules are sessionref/dshlog/layout. It never writes to the store.
package dshlog
