// Package sessionref reads the session logs that dsh writes and implements
// session references: URIs and mentions, Reference and the contract's error
// codes, and reading the newest log of a referenced session as preparation
// (sessionref/prepare) does at the moment of a request (ReadNewest). The title index that
// answers candidate queries is sessionref/titles.
//
// The package never writes to the session store. It speaks no protocol: the
// server converts its values into LSP and JSON-RPC shapes.
package sessionref
