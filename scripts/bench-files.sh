#!/usr/bin/env bash
# bench-files.sh — measures the workspace file index (package fileref) on a
# generated 200,000-file tree, 50,000 of whose files are ignored through
# .gitignore, against fdfind in the same run (SPEC §5 "Files"):
#   * index build time as a ratio to `fdfind --type f` (interleaved
#     whole-process runs, medians, wall and CPU time),
#   * completion latency p50/p99 over 150,000+ paths while typing
#     20-character queries,
#   * peak RSS of the process holding the index.
# Usage: scripts/bench-files.sh [runs]   (default 7 interleaved runs)
# The tree is kept under ${TMPDIR:-/tmp}/dsh-refls-bench-files and reused;
# delete it to regenerate.
set -euo pipefail

runs="${1:-7}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="${TMPDIR:-/tmp}"
tree="$tmp/dsh-refls-bench-files"
bin="$tmp/dsh-refls-benchfiles"

if ! command -v fdfind >/dev/null 2>&1; then
	echo "installing fd-find (baseline)…" >&2
	if ! apt-get install -y fd-find >/dev/null 2>&1; then
		apt-get update >/dev/null 2>&1
		apt-get install -y fd-find >/dev/null
	fi
fi

(cd "$repo" && go build -o "$bin" ./scripts/benchfiles)

if [ ! -f "$tree/.generated-200000-50000" ]; then
	rm -rf "$tree"
	"$bin" gen -dir "$tree" -files 200000 -ignored 50000
	# fdfind honours .gitignore only inside a git repository.
	if command -v git >/dev/null 2>&1; then
		git -C "$tree" init -q
	else
		mkdir -p "$tree/.git"
	fi
	sync
	touch "$tree/.generated-200000-50000"
fi

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(fdfind --version)"
echo "== build: fileref vs fdfind --type f ($runs interleaved runs each, after one warm-up run)"
"$bin" compare -dir "$tree" -runs "$runs"
echo "== completion while typing (fresh process; peak RSS is this process's VmHWM)"
"$bin" search -dir "$tree" -sessions 60
