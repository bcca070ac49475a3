// Package layout is the naming rules of dsh's session store (SPEC §1.1,
// §1.2): how a session id becomes a directory name and a working directory
// a project directory, and the two encodings a log is stored in. It is a
// leaf, so that the test helpers that write stores by hand
// (sessionref/internal/logtest) need not import the reader in dshlog,
// whose own tests use them.
package layout
