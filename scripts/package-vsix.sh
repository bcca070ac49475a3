#!/usr/bin/env bash
# Packages the VS Code extension: one plain .vsix (no server inside: it runs
# dsh-refls from dsh.serverPath or PATH) and one platform-specific .vsix per
# VS Code target, each carrying the dsh-refls binary cross-built for it in
# bin/. The Marketplace serves each user the .vsix of their platform.
#
#   scripts/package-vsix.sh OUTDIR [TARGET...]
#
# TARGETs default to all seven: plain (the .vsix without a server) and the
# six platforms linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64
# win32-arm64; named TARGETs package only those. Needs Go and `npm ci` done
# in editors/vscode.
# DSH_REFLS_BINDIR=DIR packages the binaries scripts/cross-build.sh DIR
# linked (DIR/GOOS-GOARCH/dsh-refls, the same flags as here) instead of
# linking each one again; a target missing there is built here.
# Each .vsix is packaged in a copy of the extension's files of its own
# (node_modules linked beside it, not inside), so VSIX_JOBS of them
# (default: one per core) package at once without sharing bin/ or dist/;
# editors/vscode itself is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:?usage: scripts/package-vsix.sh OUTDIR [TARGET...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(plain linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
fi
ext="$root/editors/vscode"
version=$(node -p "require('$ext/package.json').version")
vsce_js=$ext/node_modules/@vscode/vsce/vsce
[ -f "$vsce_js" ] || { echo "package-vsix: $vsce_js is missing: run npm ci in editors/vscode" >&2; exit 2; }
jobs=${VSIX_JOBS:-$(nproc 2>/dev/null || echo 2)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Node and esbuild look for packages in the parent directories too.
ln -s "$ext/node_modules" "$work/node_modules"

# pack NAME [TARGET]: copies the extension's files (all but node_modules,
# bin and earlier .vsix files) to $work/NAME, puts the target's binary in
# its bin/ and runs vsce there (its vscode:prepublish bundles dist/ again).
pack() (
  set -euo pipefail
  name=$1 target=${2:-}
  dir=$work/$name
  mkdir -p "$dir"
  for f in "$ext"/* "$ext"/.[!.]*; do
    [ -e "$f" ] || continue
    case ${f##*/} in node_modules | bin | *.vsix) continue ;; esac
    cp -a "$f" "$dir/"
  done
  if [ -z "$target" ]; then
    (cd "$dir" && node "$vsce_js" package --no-dependencies --skip-license --out "$out/dsh-refls-$version.vsix" >/dev/null)
    echo "package-vsix: dsh-refls-$version.vsix (plain: finds dsh-refls on PATH)"
    return
  fi
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
  mkdir -p "$dir/bin"
  from="built here"
  if [ -n "${DSH_REFLS_BINDIR:-}" ] && [ -f "$DSH_REFLS_BINDIR/$goos-$goarch/$exe" ]; then
    cp "$DSH_REFLS_BINDIR/$goos-$goarch/$exe" "$dir/bin/$exe"
    from="from $DSH_REFLS_BINDIR"
  else
    (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -ldflags "-s -w" -o "$dir/bin/$exe" ./cmd/dsh-refls)
  fi
  (cd "$dir" && node "$vsce_js" package --target "$target" --no-dependencies --skip-license --out "$out/dsh-refls-$target-$version.vsix" >/dev/null)
  echo "package-vsix: dsh-refls-$target-$version.vsix (bin/$exe for $goos/$goarch, $from)"
)

names=("${targets[@]}")
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  target=$name
  [ "$name" = plain ] && target=
  { pack "$name" $target >"$work/$name.log" 2>&1; echo $? >"$work/$name.rc"; } &
  running=$((running + 1))
done
wait
failed=0
for name in "${names[@]}"; do
  cat "$work/$name.log"
  if [ "$(cat "$work/$name.rc" 2>/dev/null)" != 0 ]; then
    echo "package-vsix: packaging $name failed" >&2
    failed=1
  fi
done
exit "$failed"
