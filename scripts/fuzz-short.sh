#!/usr/bin/env bash
# Fuzzes every fuzz target of the module briefly and prints one summary line
# per target with its exec count. Each package's fuzz-instrumented test
# binary is built once (go test -c -fuzz) and run for each of its targets in
# turn, so a target costs no build or link of its own. A target first runs
# its baseline: the seeds in testdata/fuzz and the corpus earlier runs cached
# in $GOCACHE/fuzz (or in FUZZ_CACHE, see below); then it fuzzes for ${FUZZTIME:-1s}, counted from the end
# of that baseline, so a grown cache never eats the fuzzing time. The run is
# then stopped with SIGINT, which go's fuzzing engine takes as the end of a
# clean run. A target that fails, or never finishes its baseline within
# FUZZ_LIMIT (default 120s), fails the step.
# FUZZ_PARALLEL=N fuzzes with N worker processes (default: one per core).
# FUZZ_CACHE=DIR keeps the generated corpus in DIR/<import path>/<Target>
# instead of $GOCACHE/fuzz. CI passes an empty directory: every run fuzzes
# from the seeds alone, so a cache grown by the long runs (FUZZTIME=60s, 2-7
# times the seeds) neither lengthens each target's baseline nor makes the
# step's cost depend on the machine's history.
# CI runs it with the default time; the reliability figures use FUZZTIME=60s.
# A failing input is written to the package's testdata/fuzz/<Target>/, as
# go test does; commit it as a regression seed once the bug is fixed.
#
#   scripts/fuzz-short.sh                 # every target, 1 s each
#   FUZZTIME=60s scripts/fuzz-short.sh    # every target, 60 s each
#   scripts/fuzz-short.sh ./server        # only the targets of ./server
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-1s}"
limit="${FUZZ_LIMIT:-120s}"
seconds() { # 2s, 1m, 500ms → seconds for sleep
	case $1 in
	*ms) awk -v v="${1%ms}" 'BEGIN{print v/1000}' ;;
	*s) echo "${1%s}" ;;
	*m) awk -v v="${1%m}" 'BEGIN{print v*60}' ;;
	*) echo "$1" ;;
	esac
}
slice=$(seconds "$fuzztime")
if [ "$#" -gt 0 ]; then
	pkgs=("$@")
else
	# Packages whose tests declare a fuzz target.
	mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
fi

work="$(mktemp -d)"
pid=
parallel=()
[ -z "${FUZZ_PARALLEL:-}" ] || parallel=(-test.parallel="$FUZZ_PARALLEL")
# A run cut short (^C, a failed step) stops the target being fuzzed too.
trap '[ -z "$pid" ] || kill -INT "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
trap 'exit 143' TERM
cache=${FUZZ_CACHE:-$(go env GOCACHE)/fuzz}
failed=0
summary=()
for pkg in "${pkgs[@]}"; do
	bin="$work/$(echo "$pkg" | tr -c 'a-zA-Z0-9\n' _).test"
	if ! go test -c -fuzz=. -o "$bin" "$pkg"; then
		summary+=("$(printf 'FAIL %-28s (the fuzz build failed)' "$pkg")")
		failed=1
		continue
	fi
	dir=$(go list -f '{{.Dir}}' "$pkg")
	importpath=$(go list -f '{{.ImportPath}}' "$pkg")
	mapfile -t targets < <(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		echo "== $pkg $target ($fuzztime after the baseline)"
		log="$work/log"
		: >"$log"
		(cd "$dir" && exec "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$limit" \
			"${parallel[@]}" -test.fuzzcachedir="$cache/$importpath") >"$log" 2>&1 &
		pid=$!
		# Wait for the end of the baseline (or the end of the run).
		while kill -0 "$pid" 2>/dev/null && ! grep -q 'now fuzzing' "$log"; do
			sleep 0.05
		done
		status=ok
		if grep -q 'now fuzzing' "$log"; then
			line=$(grep -o 'elapsed: [0-9]*s, gathering baseline coverage: [0-9/]* completed, now' "$log" | head -1)
			inputs=$(echo "$line" | awk '{split($6, n, "/"); print n[1]}')
			base=$(echo "$line" | awk '{sub(",", "", $2); print $6 " inputs in " $2}')
			sleep "$slice"
			kill -INT "$pid" 2>/dev/null || true
		else
			base="none"
		fi
		if ! wait "$pid"; then
			status=FAIL
		elif [ "$base" = none ]; then
			status=FAIL
			echo "fuzz-short: $target ended before its baseline completed"
		fi
		pid=
		if [ "$status" = FAIL ]; then
			failed=1
			cat "$log"
		fi
		# The exec count includes the baseline's inputs.
		execs="$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
		fuzzed=?
		[ -z "$execs" ] || [ "$base" = none ] || fuzzed=$((execs - inputs))
		summary+=("$(printf '%-4s %-28s %-26s execs %-8s fuzzed %-8s baseline %s' "$status" "$pkg" "$target" "${execs:-?}" "$fuzzed" "$base")")
	done
done
echo
printf '%s\n' "${summary[@]}"
exit "$failed"
