#!/usr/bin/env bash
# Soak test of the real server under mixed editor load (docs/reliability.md):
#   scripts/soak.sh                      # 3 minutes
#   scripts/soak.sh --duration 20s       # the short form
#   scripts/soak.sh --dir /tmp/soak      # keep the store, workspace and server log
# Fails (exit 1) when RSS grows 50% or more after the warm-up, open
# descriptors move more than 5, or completion p99 reaches 50 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/soak "$@"
