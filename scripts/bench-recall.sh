#!/usr/bin/env bash
# Benchmark of the recall index (issue 13), in one run through the real server:
#   scripts/bench-recall.sh                         # the 10,000-session, 3 GB store of bench-sessions.sh
#   FORMAT=4 scripts/bench-recall.sh                # its v4 variant
#   scripts/bench-recall.sh --small                 # 300 sessions, seconds (CI); fails below 100% recall/precision
#   SESSIONS=1000 BYTES=300M scripts/bench-recall.sh --fts5
#                                                   # against SQLite FTS5 unicode61 and trigram tables of the
#                                                   # same projected text, both in process (docs/search.md)
#   scripts/bench-recall.sh --small --fts5          # the same on the 300-session store, seconds (CI)
# Installs ripgrep with apt when it is missing, and python3 (whose sqlite3
# module is the FTS5 side) for --fts5.
set -euo pipefail
cd "$(dirname "$0")/.."
fts5=false
for a in "$@"; do case $a in --fts5) fts5=true ;; esac; done
if $fts5; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "installing python3 (its sqlite3 module runs SQLite FTS5) with apt"
    apt-get update -qq && apt-get install -y -qq python3 >/dev/null
  fi
elif ! command -v rg >/dev/null 2>&1; then
  echo "installing ripgrep (the baseline) with apt"
  apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null
fi
if [ "${1:-}" = "--small" ]; then
  shift
  exec go run ./scripts/benchrecall --small "$@"
fi
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/dsh-refls-bench}
SESSIONS=${SESSIONS:-10000}
BYTES=${BYTES:-3G}
FORMAT=${FORMAT:-0}
ROOT="$BENCH_DIR/sessions-$SESSIONS-$BYTES"
V4=false
if [ "$FORMAT" = 4 ]; then ROOT="$ROOT-v4"; V4=true; fi
exec go run ./scripts/benchrecall --root "$ROOT" --sessions "$SESSIONS" --bytes "$BYTES" --v4="$V4" "$@"
