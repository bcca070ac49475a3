#!/usr/bin/env bash
# bench-ci.sh — the small form of every performance benchmark (issue 15), a
# few seconds each, so CI logs show a regression as a changed ratio:
#   * sessions: 400 sessions / 8 MB vs `rg -c '"session/title"'` (cold
#     build, warm restart, typing queries, freshness),
#   * files: 20,000 files (5,000 ignored) vs `fdfind --type f`,
#   * end to end: the real binary over pipes, session-only and mixed
#     completion while typing, against the in-process query,
#   * recall: the body search index (300 sessions) through the server, and
#     against SQLite FTS5 unicode61 and trigram tables of the same text,
#   * memory: RSS of the binary with both indexes, idle and after a 4 MiB
#     message and request.
# It prints; it does not fail on a ratio (a shared 2-core machine is too
# noisy for a gate). The full sizes: scripts/bench-sessions.sh,
# scripts/bench-files.sh, and the commands of the README's performance
# section.
#   * dsh: dsh's own service (its published npm packages, see
#     scripts/dshdiff.sh; DSH_SRC=<dsh checkout> for its source) against
#     dsh-refls on one 200-session store: candidates and prepare.
#
#   scripts/bench-ci.sh            # every part, latency, memory, then dsh
#   scripts/bench-ci.sh latency    # sessions, files, end to end, recall, FTS5
#   scripts/bench-ci.sh memory     # the two RSS runs, side by side
#   scripts/bench-ci.sh dsh        # against dsh's own service
# CI runs the latency part alone, then the memory part beside its memory
# check (.ci/run): RSS is not bent by a second process the way latency is,
# and the RSS runs mostly wait for their steady reading.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="${TMPDIR:-/tmp}/dsh-refls-bench-ci"
mkdir -p "$tmp"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(latency memory dsh)
for part in "${parts[@]}"; do
  case $part in latency | memory | dsh) ;; *) echo "bench-ci: unknown part $part (latency, memory, dsh)" >&2; exit 2 ;; esac
done
echo "== bench-ci: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), load $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$tmp/dsh-refls" ./cmd/dsh-refls

latency() {

echo "== bench-ci: sessions (400 sessions, 8 MB)"
BENCH_DIR="$tmp" SESSIONS=400 BYTES=8M RUNS=1 scripts/bench-sessions.sh

echo "== bench-ci: files (20,000 files, 5,000 ignored)"
TMPDIR="$tmp" BENCH_FILES=20000 BENCH_IGNORED=5000 scripts/bench-files.sh 1

echo "== bench-ci: end to end over pipes (400 sessions + 20,000-file tree)"
go run ./scripts/benche2e --bin "$tmp/dsh-refls" --sessions-root "$tmp/sessions-400-8M" \
  --workspace "$tmp/dsh-refls-bench-files-20000" --titles 5

echo "== bench-ci: the recall index (300 sessions; fails below 100% recall or precision)"
scripts/bench-recall.sh --small

echo "== bench-ci: the recall index against SQLite FTS5 (the same 300 sessions, both in process)"
scripts/bench-recall.sh --small --fts5 --fts5-rounds 2
}

# memory runs the two RSS measurements at once, each printed whole.
memory() {
  [ -d "$tmp/sessions-400-8M" ] && [ -d "$tmp/dsh-refls-bench-files-20000" ] || {
    echo "bench-ci: the memory part reads the latency part's store and tree; run scripts/bench-ci.sh latency first" >&2
    return 2
  }
  local out rc=0 a b
  out=$(mktemp -d)
  # Steady RSS 4 s after each build (the default 10 s is for the full sizes):
  # the releaser has run by then (after 500 ms of quiet, retries 1 s and 2 s on).
  go run ./scripts/benchmemory --bin "$tmp/dsh-refls" --sessions-root "$tmp/sessions-400-8M" \
    --workspace "$tmp/dsh-refls-bench-files-20000" --steady 4s >"$out/indexes" 2>&1 &
  a=$!
  go run ./scripts/benchmemory --bin "$tmp/dsh-refls" --large-message-mb 4 --large-request-mb 4 >"$out/large" 2>&1 &
  b=$!
  wait "$a" || rc=1
  wait "$b" || rc=1
  echo "== bench-ci: memory (RSS with both indexes built)"
  cat "$out/indexes"
  echo "== bench-ci: memory (RSS idle and after a 4 MiB message and request)"
  cat "$out/large"
  rm -rf "$out"
  return "$rc"
}

# dsh times dsh's listCandidates and prepare against dsh-refls' on one
# 200-session store (~1.8 MB), two rounds each: about 10 s, most of it dsh
# folding every log per query.
# When npm cannot install dsh's packages (scripts/dshdiff.sh exits 3), it
# says so and the part is skipped; any other failure fails it.
dsh() {
  echo "== bench-ci: against dsh's own service (200 sessions)"
  local rc=0
  SIZES=200 scripts/bench-dsh.sh --bench-rounds 2 --bench-budget 10s --bench-deadline 30s \
    --bench-dir "$tmp/dsh" || rc=$?
  if [ "$rc" -eq 3 ]; then
    echo "bench-ci: WARNING: skipped: npm could not install dsh's packages, so dsh's own service was not measured"
    return 0
  fi
  return "$rc"
}

for part in "${parts[@]}"; do
  "$part"
done
