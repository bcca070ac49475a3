#!/usr/bin/env bash
# Reproducible benchmark of the session title index (SPEC §5, sessions):
#   scripts/bench-sessions.sh                 # 10,000 sessions, 3 GB of logs
#   SESSIONS=500 BYTES=100M scripts/bench-sessions.sh   # a quick, small run
#   FORMAT=4 scripts/bench-sessions.sh        # the same size in format v4 (dsh 0.2),
#                                             # a quarter of the sessions as migrated pairs
# Installs ripgrep with apt when it is missing; the store is generated once
# under $BENCH_DIR and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rg >/dev/null 2>&1; then
  echo "installing ripgrep (the baseline) with apt"
  apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null
fi
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/dsh-refls-bench}
SESSIONS=${SESSIONS:-10000}
BYTES=${BYTES:-3G}
FORMAT=${FORMAT:-0}
ROOT="$BENCH_DIR/sessions-$SESSIONS-$BYTES"
if [ "$FORMAT" != 0 ]; then ROOT="$ROOT-v$FORMAT"; fi
go run ./scripts/benchsessions --root "$ROOT" --sessions "$SESSIONS" --bytes "$BYTES" --runs "${RUNS:-5}" --format "$FORMAT"
