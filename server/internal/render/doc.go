// Package render writes the text a person reads in the editor: a
// session's preview in a hover (what it is, how it relates to others, what
// a reference would recall, an excerpt), the index status as a document,
// and the small pieces the other handlers share (inline code, escaped
// titles, fences, plurals, sizes, ages, errors without their codes), in
// Markdown or plain text as the client asks. It speaks no protocol: the
// server puts the text into LSP shapes.
package render
