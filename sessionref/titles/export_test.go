package titles

// WalksLazily reports whether a candidate query is first walked lazily
// (topk.go) rather than matched in full: narrowed from the remembered
// matches, or from the few sessions the pair index leaves.
func (s *Snapshot) WalksLazily(query string) bool {
	q := foldCase(query)
	return !s.narrowable(q, len(s.Sessions)) && !s.sparse(q, &queryScratch{})
}
