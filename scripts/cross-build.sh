#!/usr/bin/env bash
# Builds and vets every package, tests included, for each GOOS × GOARCH that
# users run (issue 11): platform code behind build tags must keep all six
# compiling. Prints one line per target and fails on the first broken one.
set -euo pipefail
cd "$(dirname "$0")/.."
for goos in linux darwin windows; do
  for goarch in amd64 arm64; do
    start=$(date +%s.%N)
    GOOS=$goos GOARCH=$goarch go build ./...
    GOOS=$goos GOARCH=$goarch go vet ./...
    printf 'cross-build: %s/%s ok (build+vet %.1fs)\n' "$goos" "$goarch" "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')"
  done
done
