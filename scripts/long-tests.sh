#!/usr/bin/env bash
# The long tests (internal/longtest): storms of thousands of requests, the
# soak, 64 MB lines, a client that stops reading. The main
# `go test -race ./...` skips them (and testreport lists each skip); CI runs
# them here, in a step of their own:
#   scripts/long-tests.sh | go run ./scripts/testreport
# The list is not kept by hand: ./internal/longtest/list finds every test
# that calls longtest.Require.
#
# ./server's (the cancellation storm, oversized frames beside requests in
# flight, many edits) and sessionref/dshlog's (64 MB lines) run with the race
# detector: they drive the code in-process. The cmd/dsh-refls ones and the
# soak run without it: they drive a separately built binary (not built with
# -race) and check its memory, backpressure and latency; -race there only
# slowed the test's own client down several times (cmd/dsh-refls: 62 s with
# it, 34 s without). The two runs go side by side, one package at a time
# each, so that two test binaries run at once, as before; about equal halves.
set -euo pipefail
cd "$(dirname "$0")/.."
list=$(go run ./internal/longtest/list)
mapfile -t found <<<"$list"
pattern=${found[0]}
race=()
plain=()
for p in "${found[@]:1}"; do
  case $p in
    ./cmd/dsh-refls | ./scripts/soak) plain+=("$p") ;;
    *) race+=("$p") ;;
  esac
done
export DSH_REFLS_LONG_TESTS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Each run's events go to a file of their own (two writers on one pipe could
# interleave a long line) and are printed whole when both have ended.
pids=()
if [ ${#race[@]} -gt 0 ]; then
  go test -race -json -count=1 -p 1 -run "$pattern" "${race[@]}" >"$out/race.json" 2>&1 &
  pids+=($!)
fi
if [ ${#plain[@]} -gt 0 ]; then
  go test -json -count=1 -p 1 -run "$pattern" "${plain[@]}" >"$out/plain.json" 2>&1 &
  pids+=($!)
fi
rc=0
for pid in "${pids[@]}"; do
  wait "$pid" || rc=1
done
cat "$out"/*.json
exit "$rc"
