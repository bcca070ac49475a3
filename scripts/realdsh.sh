#!/usr/bin/env bash
# scripts/realdsh.sh: the real dsh CLI as a producer of session stores,
# and dsh-refls compared with dsh's own service on them.
#
# ../shared/realdsh installs the published @deepseek-ai/dsh@0.1.0-rc.8 (with
# pnpm, its Cordis family pinned: see its README) and drives it offline
# against a mock DeepSeek provider on 127.0.0.1, so that dsh itself writes
# two varied stores (zstd and raw: compaction, resume, tools, a subagent, a
# fork, a cancelled and a killed turn, CJK, hostile tags, real references)
# and records what its own session-reference service answers on them
# (listCandidates, prepare). scripts/realdshdiff then asks dsh-refls the
# same questions on the same stores: every prepare must be byte-identical,
# candidates identical except where SPEC decides on purpose (the order of a
# non-empty query's answer; a subagent child's mention label from its
# display title), each such difference named.
#
# The install is cached in $REALDSH_WORK (default
# ~/.cache/dsh-refls-ci/realdsh): about a minute the first time, then the
# run takes about 40 s. Exit 0 when nothing differs beyond what SPEC
# decides, or when it cannot run here: no ../shared beside the repository,
# or the npm registry unreachable (both said plainly, as SKIPPED); 1 on
# any other failure or difference. DSH_REFLS=path tests a prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."

realdsh=${DSH_SHARED:-$(cd .. && pwd)/shared}/realdsh
if [ ! -x "$realdsh/run.sh" ]; then
  echo "realdsh: SKIPPED: no $realdsh/run.sh (the shared folder beside the repository; CI has it)"
  exit 0
fi
work=${REALDSH_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/dsh-refls-ci/realdsh}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "realdsh: the published dsh CLI writes two stores (install cached in $work)"
rc=0
REALDSH_WORK=$work "$realdsh/run.sh" "$out/run" >"$out/run.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  unreachable='ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|ERR_SOCKET_TIMEOUT|getaddrinfo'
  if [ -f "$work/install.log" ] && grep -qE "$unreachable" "$work/install.log"; then
    echo "realdsh: SKIPPED: the npm registry is unreachable, so dsh could not be installed:"
    grep -m 3 -E "$unreachable" "$work/install.log" | sed 's/^/  /'
    exit 0
  fi
  cat "$out/run.log"
  echo "realdsh: FAILED: $realdsh/run.sh exited $rc (log above)"
  exit 1
fi
# What dsh did: its version, and each run with its exit status.
grep -E '^dsh |^--- |^    rc=' "$out/run.log" | cut -c 1-160

bin=${DSH_REFLS:-}
if [ -z "$bin" ]; then
  bin=$out/dsh-refls
  go build -o "$bin" ./cmd/dsh-refls
fi
failed=0
for store in "home-zstd probe" "home-raw raw"; do
  set -- $store
  echo "realdsh: dsh-refls against dsh on $1 (zstd, packed chunk rows: home-zstd; raw, unpacked: home-raw)"
  go run ./scripts/realdshdiff --bin "$bin" --home "$out/run/$1" --report "$out/run/logs/$2.report.json" || failed=1
done
exit "$failed"
