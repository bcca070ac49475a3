// Package sessionref reads the session logs that dsh writes and implements
// session references: URIs and mentions, the title index that answers
// candidate queries, and preparation, which turns references into one bounded,
// untrusted, tag-safe snapshot context.
//
// The package never writes to the session store. It speaks no protocol: the
// server converts its values into LSP and JSON-RPC shapes.
package sessionref
