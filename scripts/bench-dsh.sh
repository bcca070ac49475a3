#!/usr/bin/env bash
# dsh's own session-reference service against dsh-refls on the same
# generated store (issue 15 item 3): candidate-query and prepare latency side
# by side, as ratios, at 1,000 and 10,000 sessions in one run.
#   DSH_SRC=/path/to/deepseek-harness scripts/bench-dsh.sh
#   SIZES=1000 DSH_SRC=… scripts/bench-dsh.sh --bench-rounds 3   # a quick run
# dsh is deepseek-harness 0.1.1 run from its source under Node 22 (see
# scripts/dshdiff.sh for the setup); 0.1.x folds every log per query. Stores
# are raw logs of about 8 KiB per session (BENCH_SESSION_BYTES), generated
# once under ${TMPDIR:-/tmp}/dsh-refls-benchdsh and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/dshdiff.sh --bench "${SIZES:-1000,10000}" --bench-session-bytes "${BENCH_SESSION_BYTES:-8192}" "$@"
