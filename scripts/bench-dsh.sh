#!/usr/bin/env bash
# dsh's own session-reference service against dsh-refls on the same
# generated store (issue 15 item 3): candidate-query and prepare latency side
# by side, as ratios, at 1,000 and 10,000 sessions in one run.
#   scripts/bench-dsh.sh                     # dsh's published npm packages (0.1.0-rc.8)
#   DSH_SRC=/path/to/deepseek-harness scripts/bench-dsh.sh   # dsh 0.1.1 from its source
#   SIZES=1000 scripts/bench-dsh.sh --bench-rounds 3   # a quick run
# dsh runs under Node 22 (scripts/dshdiff.sh installs it, and dsh's
# packages when DSH_SRC is not set); 0.1.x folds every log per query. Stores
# are raw logs of about 8 KiB per session (BENCH_SESSION_BYTES), generated
# once under ${TMPDIR:-/tmp}/dsh-refls-benchdsh and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/dshdiff.sh --bench "${SIZES:-1000,10000}" --bench-session-bytes "${BENCH_SESSION_BYTES:-8192}" "$@"
