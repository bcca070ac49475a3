package fileref

import "math"

// lowerASCII lower-cases an ASCII string, returning s itself when it has
// no upper-case letter so that most paths share their bytes.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}

// scoreASCII scores an ASCII path given the forward match ends of the query
// in the whole path (end) and in its base name (bend, or noBaseMatch).
func scoreASCII(path, low string, base, end, bend int, query string) int {
	return scoreASCIICeil(path, low, base, end, bend, query, math.MaxInt)
}
