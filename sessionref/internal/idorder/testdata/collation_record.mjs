// Records how dsh orders tied session ids: Array.prototype.sort with
// localeCompare, as session-query's corpus does, under this Node's ICU.
// Ids are drawn (deterministically) from characters added to Unicode
// after 6.2 (emoji, ₿, new letters, ideographs, scripts) mixed with
// digits, ASCII and accented letters, punctuation and older emoji. Output:
// JSON {node, icu, unicode, lists}, each list sorted.
let seed = 28
const rand = n => { // mulberry32
  seed = (seed + 0x6D2B79F5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) % n
}
const pools = [
  '0123456789', 'abcxyzABCXYZ', 'éèÉœßøå', '-_.~ !', '😀🙂🚀☃★',
  '🏳🛒🤩🫠₿🥇🦄🧠🪐🫶🛼🥹🏻',
  String.fromCodePoint(0xA7C0, 0xA7C1, 0xA7D0, 0xA7D1, 0x1DF00, 0x1DF0A, 0x0860, 0x1E2C0, 0x11F00),
  String.fromCodePoint(0x30000, 0x30001, 0x31350, 0x2B740, 0x2CEB0, 0x2EBF0, 0x17000, 0x1B170),
]
const chars = pools.map(p => [...p])
const id = () => {
  let s = ''
  const n = 1 + rand(4)
  for (let i = 0; i < n; i++) { const p = chars[rand(chars.length)]; s += p[rand(p.length)] }
  return s
}
const lists = []
for (let i = 0; i < 3000; i++) {
  const list = []
  const n = 2 + rand(4)
  for (let j = 0; j < n; j++) list.push(id())
  lists.push([...new Set(list)].sort((a, b) => a.localeCompare(b)))
}
process.stdout.write(JSON.stringify({ node: process.version, icu: process.versions.icu, unicode: process.versions.unicode, lists }))
