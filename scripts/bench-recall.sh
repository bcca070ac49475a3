#!/usr/bin/env bash
# Benchmark of the recall index (issue 13), in one run through the real server:
#   scripts/bench-recall.sh                         # the 10,000-session, 3 GB store of bench-sessions.sh
#   FORMAT=4 scripts/bench-recall.sh                # its v4 variant
#   scripts/bench-recall.sh --small                 # 300 sessions, seconds (CI); fails below 100% recall/precision
# Installs ripgrep with apt when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rg >/dev/null 2>&1; then
  echo "installing ripgrep (the baseline) with apt"
  apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null
fi
if [ "${1:-}" = "--small" ]; then
  exec go run ./scripts/benchrecall --small
fi
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/dsh-refls-bench}
SESSIONS=${SESSIONS:-10000}
BYTES=${BYTES:-3G}
FORMAT=${FORMAT:-0}
ROOT="$BENCH_DIR/sessions-$SESSIONS-$BYTES"
V4=false
if [ "$FORMAT" = 4 ]; then ROOT="$ROOT-v4"; V4=true; fi
exec go run ./scripts/benchrecall --root "$ROOT" --sessions "$SESSIONS" --bytes "$BYTES" --v4="$V4" "$@"
