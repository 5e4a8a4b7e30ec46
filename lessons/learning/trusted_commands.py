"""The commands whose output is the repository's own, as the default `[learning] trusted_commands`.

A module of its own, with nothing to import: the configuration model names this default
at every start, and `locality`, which reads shell commands with it, is loaded only when
something is learned.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TRUSTED_COMMANDS"]

# The repository's own tools: commands whose output is the person's environment
# speaking (their tests, their build, their linters) rather than content fetched
# from elsewhere, as long as every path they are given lies inside the tree. Each
# entry is the leading words of a command. Dependency installs and anything that
# talks to a network (`npm install`, `mix deps.get`, `git pull`) are not listed,
# and neither is a server (`mix phx.server`): its log holds whatever requests reached
# it. `[learning] trusted_commands` replaces this list.
DEFAULT_TRUSTED_COMMANDS: tuple[str, ...] = (
    "make", "pytest", "ruff", "mypy", "black", "tsc", "eslint", "prettier",
    "python -m pytest", "python -m unittest", "python -m mypy", "python -m ruff", "python -m black",
    "python -m compileall", "python -m py_compile",
    "python3 -m pytest", "python3 -m unittest", "python3 -m mypy", "python3 -m ruff", "python3 -m black",
    "python3 -m compileall", "python3 -m py_compile",
    "mix test", "mix compile", "mix format", "mix credo", "mix dialyzer",
    "cargo test", "cargo build", "cargo check", "cargo clippy", "cargo fmt",
    "go test", "go build", "go vet", "go fmt",
    "npm test", "npm run", "yarn test", "yarn run", "yarn lint", "pnpm test", "pnpm run", "pnpm lint",
)  # fmt: skip
