#!/usr/bin/env bash
# Builds every package for each GOOS × GOARCH that users run (issue 11), and
# vets every package, tests included, once per GOOS: platform code sits behind
# GOOS build tags, so the second architecture of an OS adds nothing that vet
# would see but costs a full type-check. linux/amd64 is vetted by .ci/run itself.
# Every target builds with CGO_ENABLED=0, as the released binaries are
# (scripts/package-vsix.sh): for linux/amd64 that is the one setting the
# rest of CI does not compile (vet and the tests build with cgo), and the
# VS Code packaging test then finds its linux-x64 build in the cache.
# Prints one line per target and fails on the first broken one.
set -euo pipefail
cd "$(dirname "$0")/.."
for goos in linux darwin windows; do
  for goarch in amd64 arm64; do
    start=$(date +%s.%N)
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build ./...
    what=build
    if [ "$goarch" = amd64 ] && [ "$goos" != linux ]; then
      CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go vet ./...
      what=build+vet
    fi
    printf 'cross-build: %s/%s ok (%s %.1fs)\n' "$goos" "$goarch" "$what" "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')"
  done
done
