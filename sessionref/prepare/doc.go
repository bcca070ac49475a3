// Package prepare is preparation: it turns session references into one
// bounded, untrusted, tag-safe snapshot context; previews, retention,
// prompt rendering, spill, redaction.
package prepare
