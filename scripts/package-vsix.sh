#!/usr/bin/env bash
# Packages the VS Code extension: one plain .vsix (no server inside: it runs
# dsh-refls from dsh.serverPath or PATH) and one platform-specific .vsix per
# VS Code target, each carrying the dsh-refls binary cross-built for it in
# bin/. The Marketplace serves each user the .vsix of their platform.
#
#   scripts/package-vsix.sh OUTDIR [TARGET...]
#
# TARGETs default to all six: linux-x64 linux-arm64 darwin-x64 darwin-arm64
# win32-x64 win32-arm64. Needs Go and `npm ci` done in editors/vscode.
# DSH_REFLS_BINDIR=DIR packages the binaries scripts/cross-build.sh DIR
# linked (DIR/GOOS-GOARCH/dsh-refls, the same flags as here) instead of
# linking each one again; a target missing there is built here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:?usage: scripts/package-vsix.sh OUTDIR [TARGET...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
fi
ext="$root/editors/vscode"
version=$(node -p "require('$ext/package.json').version")
vsce() { (cd "$ext" && npx --no-install vsce package --no-dependencies --skip-license "$@" >/dev/null); }

# The bin/ folder only ever holds the binary of the target being packaged.
trap 'rm -rf "$ext/bin"' EXIT
rm -rf "$ext/bin"

vsce --out "$out/dsh-refls-$version.vsix"
echo "package-vsix: dsh-refls-$version.vsix (plain: finds dsh-refls on PATH)"

for target in "${targets[@]}"; do
  case $target in
    linux-x64) goos=linux goarch=amd64 ;;
    linux-arm64) goos=linux goarch=arm64 ;;
    darwin-x64) goos=darwin goarch=amd64 ;;
    darwin-arm64) goos=darwin goarch=arm64 ;;
    win32-x64) goos=windows goarch=amd64 ;;
    win32-arm64) goos=windows goarch=arm64 ;;
    *) echo "package-vsix: unknown target $target" >&2; exit 2 ;;
  esac
  exe=dsh-refls
  [ "$goos" = windows ] && exe=dsh-refls.exe
  rm -rf "$ext/bin"
  mkdir -p "$ext/bin"
  from="built here"
  if [ -n "${DSH_REFLS_BINDIR:-}" ] && [ -f "$DSH_REFLS_BINDIR/$goos-$goarch/$exe" ]; then
    cp "$DSH_REFLS_BINDIR/$goos-$goarch/$exe" "$ext/bin/$exe"
    from="from $DSH_REFLS_BINDIR"
  else
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -ldflags "-s -w" -o "$ext/bin/$exe" ./cmd/dsh-refls
  fi
  vsce --target "$target" --out "$out/dsh-refls-$target-$version.vsix"
  echo "package-vsix: dsh-refls-$target-$version.vsix (bin/$exe for $goos/$goarch, $from)"
done
