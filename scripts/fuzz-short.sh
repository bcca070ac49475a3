#!/usr/bin/env bash
# Runs every fuzz target of the module for ${FUZZTIME:-10s} each, one after
# the other, and prints one summary line per target with its exec count.
# CI runs it with the default; the reliability figures use FUZZTIME=60s.
# A failing input is written to the package's testdata/fuzz/<Target>/ by
# go test; commit it as a regression seed once the bug is fixed.
#
#   scripts/fuzz-short.sh                 # every target, 10 s each
#   FUZZTIME=60s scripts/fuzz-short.sh    # every target, 60 s each
#   scripts/fuzz-short.sh ./server        # only the targets of ./server
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-10s}"
if [ "$#" -gt 0 ]; then
	pkgs=("$@")
else
	# Packages whose tests declare a fuzz target.
	mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
failed=0
summary=()
for pkg in "${pkgs[@]}"; do
	mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		echo "== $pkg $target ($fuzztime)"
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
			status=ok
		else
			status=FAIL
			failed=1
			cat "$log"
		fi
		execs="$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
		summary+=("$(printf '%-4s %-28s %-24s execs %s' "$status" "$pkg" "$target" "${execs:-?}")")
	done
done
echo
printf '%s\n' "${summary[@]}"
exit "$failed"
