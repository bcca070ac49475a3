#!/usr/bin/env bash
# The long tests (internal/longtest): storms of thousands of requests, the
# soak, 64 MB lines, a client that stops reading. The main
# `go test -race ./...` skips them (and testreport lists each skip); CI runs
# them here, in a step of their own, with the race detector:
#   scripts/long-tests.sh | go run ./scripts/testreport
# The list is not kept by hand: ./internal/longtest/list finds every test
# that calls longtest.Require.
set -euo pipefail
cd "$(dirname "$0")/.."
list=$(go run ./internal/longtest/list)
mapfile -t found <<<"$list"
pattern=${found[0]}
# go test runs two packages at a time in the order given: ./server's storms
# take about as long as the other packages together, so it starts first.
packages=()
for p in "${found[@]:1}"; do
  [ "$p" = ./server ] && packages=("$p" "${packages[@]}") || packages+=("$p")
done
export DSH_REFLS_LONG_TESTS=1
exec go test -race -json -count=1 -run "$pattern" "${packages[@]}"
