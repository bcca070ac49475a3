// Package sessionref is the vocabulary of session references: dsh-session:
// URIs and mentions, Reference and the contract's error codes.
//
// Reading dsh's logs is sessionref/dshlog, the title index
// sessionref/titles, preparation sessionref/prepare. The package speaks no
// protocol: the server converts its values into LSP and JSON-RPC shapes.
package sessionref
