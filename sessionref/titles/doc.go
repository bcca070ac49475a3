// Package titles is the session title index: every session of a dsh
// sessions root with its title, cwd and kind, kept current as logs grow,
// persisted across restarts in its cache file, and ranked for candidate
// queries (SPEC §1.5, §2.2). It reads logs through sessionref/dshlog and
// never holds message bodies.
package titles
