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
# BENCH_FILES=40000 BENCH_IGNORED=10000 scripts/bench-files.sh 3 runs a
# reduced size (SPEC §5's numbers are for the default 200,000/50,000).
# The tree is kept under ${TMPDIR:-/tmp}/dsh-refls-bench-files-<files> and reused;
# delete it to regenerate.
set -euo pipefail

runs="${1:-7}"
nfiles="${BENCH_FILES:-200000}"
nignored="${BENCH_IGNORED:-50000}"
# BENCH_PATTERNS=N adds N generated names to the root .gitignore (100,000:
# 0.9 MB, under the 1 MiB an ignore file may have): every path and every
# listing is decided against them too.
npatterns="${BENCH_PATTERNS:-0}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="${TMPDIR:-/tmp}"
tree="$tmp/dsh-refls-bench-files-$nfiles"
[ "$npatterns" -eq 0 ] || tree="$tree-patterns-$npatterns"
bin="$tmp/dsh-refls-benchfiles"

if ! command -v fdfind >/dev/null 2>&1; then
	echo "installing fd-find (baseline)…" >&2
	if ! apt-get install -y fd-find >/dev/null 2>&1; then
		apt-get update >/dev/null 2>&1
		apt-get install -y fd-find >/dev/null
	fi
fi

(cd "$repo" && go build -o "$bin" ./scripts/benchfiles)

if [ ! -f "$tree/.generated-$nfiles-$nignored-$npatterns" ]; then
	rm -rf "$tree"
	"$bin" gen -dir "$tree" -files "$nfiles" -ignored "$nignored" -patterns "$npatterns"
	# fdfind honours .gitignore only inside a git repository.
	if command -v git >/dev/null 2>&1; then
		git -C "$tree" init -q
	else
		mkdir -p "$tree/.git"
	fi
	sync
	touch "$tree/.generated-$nfiles-$nignored-$npatterns"
fi

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(fdfind --version)"
echo "== build: fileref vs fdfind --type f ($runs interleaved runs each, after one warm-up run)"
"$bin" compare -dir "$tree" -runs "$runs"
echo "== completion while typing (fresh process; peak RSS is this process's VmHWM)"
"$bin" search -dir "$tree" -sessions 60
