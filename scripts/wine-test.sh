#!/usr/bin/env bash
# Runs the Windows build of the Go tests under Wine (issue 11): compiles each
# package's test binary for GOOS=windows once and runs it with wine64,
# printing `go test -json` events for scripts/testreport. Tests that cannot
# run under Wine are not run, and each is reported as a skipped test with the
# reason, so the report lists them instead of passing silently. A missing
# tool makes the whole step a reported skip.
#
#   scripts/wine-test.sh | go run ./scripts/testreport
set -euo pipefail
cd "$(dirname "$0")/.."

work=${WINE_TEST_DIR:-${TMPDIR:-/tmp}/dsh-refls-wine}
mkdir -p "$work"
export WINEPREFIX=$work/prefix WINEDEBUG=-all
export PATH=$PATH:/usr/lib/wine

# skip prints a test2json skip event for pkg/test with reason.
skip() {
  local pkg=$1 test=$2 reason=$3
  printf '{"Action":"output","Package":"%s","Test":"%s","Output":"wine: not run: %s\\n"}\n' "$pkg" "$test" "$reason"
  printf '{"Action":"skip","Package":"%s","Test":"%s"}\n' "$pkg" "$test"
}

mod=github.com/dsh-refls/dsh-refls
for tool in wine64 x86_64-w64-mingw32-as x86_64-w64-mingw32-ld; do
  if ! command -v "$tool" >/dev/null; then
    skip "$mod" WindowsUnderWine "$tool is not installed (Debian: wine64, binutils-mingw-w64-x86-64)"
    exit 0
  fi
done

# Go 1.24+ needs bcryptprimitives.dll's ProcessPrng, which Wine 8 lacks: a
# stub DLL forwards it to advapi32's SystemFunction036 (RtlGenRandom).
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
  wineboot -i >/dev/null 2>&1 || wine64 wineboot -i >/dev/null 2>&1 || true
  printf '\t.text\n\t.globl DllMain\nDllMain:\n\tmovl $1, %%eax\n\tret\n' >"$work/stub.s"
  printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\n\tProcessPrng = advapi32.SystemFunction036\n' >"$work/bcp.def"
  x86_64-w64-mingw32-as -o "$work/stub.o" "$work/stub.s"
  x86_64-w64-mingw32-ld -shared --entry DllMain -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" "$work/stub.o" "$work/bcp.def"
fi

# os.RemoveAll (and so every t.TempDir cleanup) deletes with
# FileDispositionInformationEx, which Wine 8 answers STATUS_NOT_IMPLEMENTED
# where Windows before 10 1607 answers STATUS_INVALID_INFO_CLASS: an overlay
# of the standard library for this build adds that status to the ones that
# fall back to the older call. Nothing of the repository changes.
at=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
sed 's|^\t\tSTATUS_NOT_SUPPORTED:  |\t\tSTATUS_NOT_SUPPORTED, NTStatus(0xC0000002):  |' "$at" >"$work/at_windows.go"
if cmp -s "$at" "$work/at_windows.go"; then
  skip "$mod" WindowsUnderWine "the RemoveAll overlay no longer applies to $(go version); update scripts/wine-test.sh"
  exit 0
fi
printf '{"Replace":{"%s":"%s"}}\n' "$at" "$work/at_windows.go" >"$work/overlay.json"

# Tests not run under Wine, with the reason. Slow ones are left out to keep
# the step within a few minutes; the Linux run covers them.
declare -A notrun=(
  [dshlog:TestResolveRoot]="expects POSIX absolute paths (/srv/sessions); Windows makes them Z:\\\\srv\\\\sessions"
  [prepare:TestPrepareTextTwoSources]="checks POSIX modes 0600/0700 of the spill files; Windows has none (docs/editors.md: the profile ACL protects them)"
  [prepare:TestPromptAndSpillBytesAreDsh]="compares spill paths and modes with dsh's POSIX output"
  [titles:TestStaleCacheTempsAreRemoved]="needs a symbolic link beside the cache; Wine 8 does not resolve the links os.Symlink makes"
  [dshlog:TestHugeLine]="slow under Wine (50 s); runs on Linux"
  [prepare:TestPrepareHugeLine]="slow under Wine (50 s); runs on Linux"
  [titles:TestTruncatedCacheIsUnusable]="slow under Wine (35 s at load 12: a file written and loaded per cut length); platform-free decoding of the cache bytes, runs on Linux"
  [dshlog:TestProjectionFastPathMatchesReference]="slow under Wine (24 s at load 12: a log file per hostile line, header, encoding and tear); platform-free parsing, runs on Linux"
  [titles:TestCandidatesMatchOracle]="slow under Wine (53 s: 2,500 generated sessions, 750 queries against the oracle); platform-free ranking logic, runs on Linux"
  [fileref:TestApply]="symbolic links: Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestApplyThroughSymlinkedRoot]="symbolic links: Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestStatMention]="symbolic links: Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestNoEscapeFromWorkspace]="symbolic links: Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestDirFactsTreeAndIgnoredNames]="symbolic links (src/link.go is counted): Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestDirTotalsCountWhatTheIndexHolds]="symbolic links (src/link.go is counted): Wine 8 does not resolve the links os.Symlink makes"
  [fileref:TestRandomQueriesStayInside]="creates names ending in dots, which Win32 strips (.hidden.. is .hidden)"
  [fileref:TestInvalidUTF8NamesAreNeverOffered]="Windows names are UTF-16: the invalid UTF-8 bytes become U+FFFD when the file is made, so the case cannot be produced"
  [fileref:TestNarrowingMatchesFreshSearch]="slow under Wine (62 s); runs on Linux"
  [ignore:TestExcludesFile]="expects POSIX absolute paths (/repo/from-alt)"
  [watch:TestDirSet]="internal test on POSIX paths (/r/a)"
  [watch:TestChanges]="removing a watched tree fails under Wine 8 (directory not empty while watched)"
  [watch:TestRootRemoved]="removing a watched tree fails under Wine 8 (directory not empty while watched)"
  [watch:TestRootSymlink]="symbolic links: Wine 8 does not resolve the links os.Symlink makes"
  [watch:TestBurst]="slow under Wine (10000 files, 4 min); runs on Linux"
)

# The packages run; for server its path and URI tests and the protocol tests
# of completion, hover, diagnostics, custom methods, configuration and
# watched files on Windows paths (about 12 s; the whole package takes
# minutes under Wine).
declare -A only=([server]='^(TestURI|TestPathToURI|TestSamePath|TestCompletion|TestResolve|TestHover|TestDiagnostics|TestCustomMethods|TestConfigurationReplaces|TestWatched|TestWorkspaceWatched|TestRefused)')
# The reader's and the title index's tests, the longest (about 50 s together
# under Wine when they were one package), first.
pkgs=(sessionref/dshlog sessionref/titles server sessionref/prepare sessionref fileref watch fileref/ignore completion)

# Every name in notrun must still be a test of its package, and every
# alternative of an only pattern must still match one: a renamed test would
# otherwise run under Wine again (TestPrepareTextGoldens, renamed, ran and
# failed on POSIX modes), or drop out of the run without a word. The names
# come from the test files GOOS=windows compiles.
# fail_event prints a test2json failure of pkg/test with message, so
# testreport lists it with the reason.
fail_event() {
  local pkg=$1 test=$2 msg=$3
  printf '{"Action":"output","Package":"%s","Test":"%s","Output":"wine-test.sh: %s\\n"}\n' "$pkg" "$test" "$msg"
  printf '{"Action":"fail","Package":"%s","Test":"%s"}\n' "$pkg" "$test"
}
stale=0
for p in "${pkgs[@]}"; do
  short=${p##*/}
  names=$(GOOS=windows GOARCH=amd64 go list -f '{{range .TestGoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .XTestGoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}' "./$p" |
    xargs -r sed -n 's/^func \(Test[A-Za-z0-9_]*\)(.*/\1/p')
  for k in "${!notrun[@]}"; do
    [ "${k%%:*}" = "$short" ] || continue
    if ! grep -qx "${k#*:}" <<<"$names"; then
      echo "wine-test.sh: notrun names ${k#*:}, which is no test of ./$p (renamed or removed?): rename it in notrun or drop it" >&2
      fail_event "$mod/$p" "${k#*:}" "notrun names ${k#*:}, which is no test of ./$p (renamed or removed?): rename it in scripts/wine-test.sh or drop it"
      stale=1
    fi
  done
  pattern=${only[$short]:-}
  [ -n "$pattern" ] || continue
  alts=${pattern#^(}
  alts=${alts%)}
  IFS='|' read -r -a alts <<<"$alts"
  for a in "${alts[@]}"; do
    if ! grep -q "^$a" <<<"$names"; then
      echo "wine-test.sh: the only pattern of $short names $a, which starts no test of ./$p (renamed or removed?)" >&2
      fail_event "$mod/$p" "$a" "the only pattern of $short names $a, which starts no test of ./$p (renamed or removed?): fix it in scripts/wine-test.sh"
      stale=1
    fi
  done
done
[ "$stale" -eq 0 ] || exit 1

# One go test -c for all packages: they load once and link in parallel.
# Each binary is named after its package's last path element.
mkdir -p "$work/bin"
GOOS=windows GOARCH=amd64 go test -c -overlay "$work/overlay.json" -o "$work/bin/" "${pkgs[@]/#/./}"
# The first Wine process of a prefix starts the wineserver and Wine's own
# services (services.exe, winedevice.exe, ...), which inherit its stdout
# and live until the last Wine process ends. Started by a test binary,
# they held that binary's pipe to test2json open, so its package ended
# only with the slowest one (server "took" as long as sessionref, 160 s)
# and the packages after it waited. They are started here, their output
# to /dev/null, and stopped when the step ends (or 10 s after the last
# Wine process, should this script be killed).
wineserver -p10 >/dev/null 2>&1 </dev/null
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
wine64 cmd /c exit >/dev/null 2>&1 </dev/null || true
# The packages run WINE_JOBS (default 2) at a time, each one's events into
# a file of its own, printed in order at the end: under Wine a test binary
# mostly waits (27 CPU seconds in the step's 100 s on the idle machine).
jobs=${WINE_JOBS:-2}
rm -rf "$work/events"
mkdir -p "$work/events"
running=0
for i in "${!pkgs[@]}"; do
  p=${pkgs[$i]}
  short=${p##*/}
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  (
    skips=()
    for k in "${!notrun[@]}"; do
      if [ "${k%%:*}" = "$short" ]; then
        skips+=("${k#*:}")
        skip "$mod/$p" "${k#*:}" "${notrun[$k]}"
      fi
    done
    # The timeout guards against a hang only: sessionref, when it held the
    # reader and the title index, took ~45 s here on the idle machine, and
    # at load 15 it ran past 4 minutes.
    args=(-test.v=test2json -test.count=1 -test.timeout=10m)
    if [ ${#skips[@]} -gt 0 ]; then
      args+=("-test.skip=^($(IFS='|'; echo "${skips[*]}"))\$")
    fi
    if [ -n "${only[$short]:-}" ]; then
      args+=("-test.run=${only[$short]}")
    fi
    cd "$p" && go tool test2json -t -p "$mod/$p" wine64 "$work/bin/$short.test.exe" "${args[@]}"
  ) >"$work/events/$i.json" 2>"$work/events/$i.err" &
  running=$((running + 1))
done
wait || true
for i in "${!pkgs[@]}"; do
  cat "$work/events/$i.json"
  cat "$work/events/$i.err" >&2
done
