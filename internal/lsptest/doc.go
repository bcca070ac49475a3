// Package lsptest is a fake editor for testing dsh-refls over the wire, in
// the shape of gopls' fake.Editor: it connects to a server over any pair of
// pipes (an in-process Serve on net.Pipe or io.Pipe, or the real binary's
// stdin and stdout), initializes with the capabilities and options a test
// gives, opens and edits documents whose text marks the cursor with ‸,
// sends typed requests, answers the server's own requests (configuration,
// progress creation, showDocument, refreshes), and records every message the
// server writes so a test can Await one with a deadline instead of sleeping.
//
// The output of the server is read strictly: every frame must be
// "Content-Length: N\r\n\r\n" followed by N bytes of JSON, and the first
// violation ends the reader with an error a test can see (ReadErr). For
// hostile inputs, WriteRaw sends bytes as they are, and Messages shows every
// frame the server wrote, in order, batch arrays included.
//
// The package does not import the server: results decode into whatever the
// test passes, so a test can check the exact shape on the wire.
package lsptest
