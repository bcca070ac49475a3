package titles

import "fmt"

// decodeCache decodes a whole cache body (for the tests;
// LoadCache restores each block where it lies instead).
func decodeCache(body []byte) (*cacheFile, error) {
	r := &cacheReader{b: body}
	var cf cacheFile
	var n int
	var cwdBytes int
	cf.Format, cf.Root, n, cwdBytes = r.header()
	var cwds []cachedCwd
	if r.err == nil && cwdBytes <= len(r.b) {
		tr := &cacheReader{b: r.b[:cwdBytes]}
		cwds = tr.cwdTable(false)
		if r.b = r.b[cwdBytes:]; tr.err != nil || len(tr.b) != 0 {
			r.err = errCacheTruncated
		}
	} else {
		r.fail()
	}
	for len(cf.Sessions) < n && r.err == nil {
		h, body := r.block()
		if r.err != nil {
			break
		}
		br := &cacheReader{b: body[:h.fieldsEnd()]}
		filterAt, text := h.fieldsEnd(), body[h.size-h.text:]
		listed := 0
		for i := 0; i < h.sessions && br.err == nil; i++ {
			var s cachedSession
			sl, _ := br.session(&s, &s.Entry, cwds, nil)
			if br.err != nil || sl >= len(text) || text[sl] != 0 {
				br.fail()
				break
			}
			s.SearchAll, text = string(text[:sl]), text[sl+1:]
			s.SearchByteSet, s.SearchPairSet = filters(body[filterAt:])
			filterAt += filterBytes
			if s.Skip == "" {
				listed++
			}
			cf.Sessions = append(cf.Sessions, s)
		}
		if br.err == nil && (len(br.b) != 0 || len(text) != 0 || listed != h.listed) {
			br.err = fmt.Errorf("a block holds %d bytes of fields and %d of texts after its last session, and %d listed sessions, not %d", len(br.b), len(text), listed, h.listed)
		}
		if r.err == nil {
			r.err = br.err
		}
	}
	if r.err == nil && len(cf.Sessions) != n {
		r.err = fmt.Errorf("%d sessions in the blocks, %d announced", len(cf.Sessions), n)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the last session", len(r.b))
	}
	return &cf, r.err
}
