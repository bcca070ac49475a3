// Package lspwire reads and writes the frames of the LSP base protocol for
// a jsonrpc2 connection, every part bounded.
//
// The server does not use go.lsp.dev/jsonrpc2's own header stream: in
// v1.0.1 it keeps its read and write buffers at the size of the largest
// frame it ever saw (one 30 MB answer left 30 MB live for the rest of the
// process) and accepts bodies up to 1 GiB, both measured. Here a header
// line is at most 4 KiB and a header block 32 lines; a body over
// MaxMessageBytes (64 MiB) is skipped without being held and answered with
// InvalidRequest; a frame that is well framed but not a JSON-RPC message
// is answered with its JSON-RPC error and skipped; only input whose
// framing is lost ends the connection. No buffer over 1 MiB is kept
// between frames read, none over 64 KiB between frames written.
//
// Stream is the connection's jsonrpc2.Stream: besides reading and writing
// it bounds the calls read and not yet answered, reports the end of input
// only once their answers are written, and writes the optional JSON-lines
// trace. A call's result is held by the Stream (Hold) and travels through
// jsonrpc2 as a placeholder, so that the Stream writes it where it lies or
// as it is encoded (Answer): jsonrpc2 hands a Stream its answers as values
// of an unexported type, whose result could only be copied out.
// AnswerBuffers lends the arrays typing's answers are encoded into and
// takes each back once Stream has written it.
package lspwire
