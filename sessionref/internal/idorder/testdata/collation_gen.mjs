// Places each character that golang.org/x/text's collation tables
// (Unicode 6.2) do not know in the ICU root order of this Node, relative
// to the characters they do know. Input (stdin): those code points, hex,
// one a line. Output (stdout): JSON {node, icu, unicode, table}, table
// holding [codePoint, proxy, k, mode] for each of them this ICU assigns:
// proxy is the nearest known character before it in ICU root order (-1:
// primary-ignorable, dropped), k its rank among the new characters after
// that proxy, and mode, when it differs from the proxy at the primary
// level, the rank of its primary weight among them (0: equal to the proxy's).
// Used by TestGenerateCollationTable (sessionref/internal/idorder/collation_gen_test.go).
import { readFileSync } from 'node:fs'
const unknown = new Set(readFileSync(0, 'utf8').trim().split('\n').map(h => parseInt(h, 16)))
const assigned = /^[\p{Assigned}]$/u, priv = /^[\p{Co}\p{Cs}]$/u
const col = new Intl.Collator('und')
const base = new Intl.Collator('und', { sensitivity: 'base' })
const all = []
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue
  const s = String.fromCodePoint(cp)
  if (assigned.test(s) && !priv.test(s)) all.push(cp)
}
const str = cp => String.fromCodePoint(cp)
all.sort((a, b) => col.compare(str(a), str(b)) || a - b)
const out = []
let proxy = -1, k = 0, g = 0, prev = ''
const lead = []
for (const cp of all) {
  if (!unknown.has(cp)) { proxy = cp; k = 0; g = 0; prev = ''; continue }
  const s = str(cp)
  if (base.compare('a' + s, 'a') === 0) { out.push([cp, -1, 0, 0]); continue }
  if (proxy < 0) { lead.push(cp); continue }
  k++
  if (prev === '' || base.compare(s, prev) !== 0) g++
  prev = s
  out.push([cp, proxy, k, base.compare(s, str(proxy)) === 0 ? 0 : g])
}
if (lead.length > 0) throw new Error(`${lead.length} new characters sort before every known one`)
out.sort((a, b) => a[0] - b[0])
process.stdout.write(JSON.stringify({ node: process.version, icu: process.versions.icu, unicode: process.versions.unicode, table: out }))
