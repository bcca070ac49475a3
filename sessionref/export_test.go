package sessionref

// WalksLazily reports whether a candidate query is first walked lazily
// (topk.go) rather than narrowed from the remembered matches.
func (s *Snapshot) WalksLazily(query string) bool {
	return !s.narrowable(foldCase(query), len(s.Sessions))
}
