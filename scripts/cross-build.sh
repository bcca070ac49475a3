#!/usr/bin/env bash
# Builds every package for each GOOS × GOARCH that users run (issue 11), and
# vets every package, tests included, once per GOOS: platform code sits behind
# GOOS build tags, so the second architecture of an OS adds nothing that vet
# would see but costs a full type-check. linux/amd64 is vetted by .ci/run itself.
#
# Per target, every package is compiled (`go list -export` compiles each one,
# main packages included, as `go build` does, and fails as it does), and the
# shipped binary, cmd/dsh-refls, is linked as a release is: CGO_ENABLED=0,
# -ldflags "-s -w" (scripts/package-vsix.sh). The other main packages are
# development tools (scripts/, internal/longtest/list) that CI runs on Linux:
# `go build ./...` would link all thirteen for every target, about 11 CPU
# seconds a target with a warm cache, for binaries it throws away.
# For linux/amd64 CGO_ENABLED=0 is the one setting the rest of CI does not
# compile (vet and the tests build with cgo).
#
#   scripts/cross-build.sh [BINDIR]
#
# With BINDIR, each target's binary is kept as BINDIR/GOOS-GOARCH/dsh-refls
# (.exe on Windows); scripts/package-vsix.sh packages those (DSH_REFLS_BINDIR)
# instead of linking them again.
# Prints one line per target and fails on the first broken one.
set -euo pipefail
cd "$(dirname "$0")/.."
bindir=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -n "$bindir" ]; then
  mkdir -p "$bindir"
  bindir=$(cd "$bindir" && pwd)
fi
for goos in linux darwin windows; do
  for goarch in amd64 arm64; do
    start=$(date +%s.%N)
    exe=dsh-refls
    [ "$goos" = windows ] && exe=dsh-refls.exe
    dir=$out/$goos-$goarch
    [ -z "$bindir" ] || dir=$bindir/$goos-$goarch
    mkdir -p "$dir"
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go list -export -f '{{if .Error}}{{.Error}}{{end}}' ./... >/dev/null
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -ldflags "-s -w" -o "$dir/$exe" ./cmd/dsh-refls
    what="compile all, link cmd/dsh-refls"
    if [ "$goarch" = amd64 ] && [ "$goos" != linux ]; then
      CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go vet ./...
      what="$what, vet"
    fi
    printf 'cross-build: %s/%s ok (%s %.1fs)\n' "$goos" "$goarch" "$what" "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')"
  done
done
