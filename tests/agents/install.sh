#!/usr/bin/env bash
# Install the real agent CLIs the agent tests run, at pinned versions, from the registries.
#
# Idempotent: each CLI is installed once into its own prefix under $FAILRES_TEST_AGENTS
# (default ${XDG_CACHE_HOME:-~/.cache}/failres/test-agents) and skipped when the pinned version
# is already there, so CI pays the download once per machine. The tests find the binaries in
# $FAILRES_TEST_AGENTS/bin. Exit non-zero when any CLI could not be installed; .ci/run decides
# whether that fails the run (it does under CI=true).
set -uo pipefail

CLAUDE_VERSION="2.1.197"
CODEX_VERSION="0.171.0"
AIDER_VERSION="0.86.2"

root="${FAILRES_TEST_AGENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/failres/test-agents}"
mkdir -p "$root/bin"
failed=0

# Seconds and on-disk size of one install, kept beside it so a person can see what it cost.
record() {  # name seconds dir
  local size
  size="$(du -sm "$3" 2>/dev/null | cut -f1)"
  printf '%s installed in %ss, %s MB\n' "$1" "$2" "$size" | tee "$root/$1.installed"
}

installed_version_is() {  # binary pinned-version
  [ -x "$1" ] && "$1" --version 2>/dev/null | grep -qF "$2"
}

npm_cli() {  # name package version binary
  local name="$1" package="$2" version="$3" binary="$4" prefix="$root/$1"
  if installed_version_is "$prefix/node_modules/.bin/$binary" "$version"; then
    echo "$name $version already installed in $prefix"
  else
    if ! command -v npm >/dev/null; then
      echo "error: npm is not on PATH; cannot install $package" >&2
      return 1
    fi
    local started=$SECONDS
    rm -rf "$prefix" && mkdir -p "$prefix"
    # --prefix keeps the CLI out of the global node_modules; no audit/fund chatter in CI logs.
    if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$package@$version" >&2; then
      echo "error: npm install $package@$version failed" >&2
      return 1
    fi
    record "$name" "$((SECONDS - started))" "$prefix"
  fi
  ln -sfn "$prefix/node_modules/.bin/$binary" "$root/bin/$binary"
  installed_version_is "$root/bin/$binary" "$version"
}

aider_cli() {
  local prefix="$root/aider"
  if installed_version_is "$prefix/bin/aider" "$AIDER_VERSION"; then
    echo "aider $AIDER_VERSION already installed in $prefix"
  else
    # aider pins its dependencies for Python 3.11; a venv of its own keeps them away from failres's.
    local python
    python="$(command -v python3.11 || command -v python3)"
    if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      echo "error: aider-chat $AIDER_VERSION needs Python 3.11; $python is not" >&2
      return 1
    fi
    local started=$SECONDS
    rm -rf "$prefix"
    # pip's output goes to a log, shown only when the install fails (a clean install is silent).
    local log="$root/aider-install.log"
    if ! "$python" -m venv "$prefix" \
        || ! "$prefix/bin/pip" install -q --disable-pip-version-check "aider-chat==$AIDER_VERSION" >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      echo "error: pip install aider-chat==$AIDER_VERSION failed" >&2
      return 1
    fi
    record aider "$((SECONDS - started))" "$prefix"
  fi
  ln -sfn "$prefix/bin/aider" "$root/bin/aider"
  installed_version_is "$root/bin/aider" "$AIDER_VERSION"
}

npm_cli claude @anthropic-ai/claude-code "$CLAUDE_VERSION" claude || failed=1
npm_cli codex @openai/codex "$CODEX_VERSION" codex || failed=1
aider_cli || failed=1

echo "agent CLIs in $root/bin"
exit "$failed"
