// Package dshlog is what dsh writes on disk, read as dsh reads it: the
// session store's layout (SPEC §1.1): how a session id becomes a directory
// name and a working directory a project key. It is the layer a new log
// format of dsh changes; the rest of sessionref reads the store through
// it.
package dshlog
