"""Which commands are first-party: the tables `locality` reads a command with, and the default
`[learning] trusted_commands`.

A module of its own, with nothing to import: the configuration model names the default at
every start, and `locality`, which reads shell commands with these tables, is loaded only when
something is learned.

First-party is what the person and their repository control: inspecting local files, local
git, asking the machine about itself, and the repository's own build and test tools run on its
own code. Anything that fetches, installs or serves is not, because its output is whatever
someone else sent: a page, a package's install script, the requests that reached a server.
Each table says which of the two a program is; a program in none of them is not first-party.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TRUSTED_COMMANDS", "LOCAL_GIT", "LOCAL_GIT_REMOTE", "LOCAL_PROGRAMS", "SERVING_WORDS",
           "VERSION_FLAGS", "WINDOWS_LOCAL_PROGRAMS"]

# The repository's own tools: commands whose output is the person's environment
# speaking (their tests, their build, their linters, their compiler) rather than content
# fetched from elsewhere, as long as every path they are given lies inside the tree. Each
# entry is the leading words of a command. Dependency installs and anything that talks to a
# network (`npm install`, `mix deps.get`, `git pull`, `npx`, which fetches what it does not
# find) are not listed, and neither is a server (`mix phx.server`, `npm run dev`): its log
# holds whatever requests reached it. `npm run` is listed script by script for that reason:
# `npm run build` is the repository's build, `npm run dev|start|serve` its server.
# `[learning] trusted_commands` replaces this list.
DEFAULT_TRUSTED_COMMANDS: tuple[str, ...] = (
    "make", "pytest", "ruff", "mypy", "black", "isort", "flake8", "pylint", "tsc", "eslint", "prettier",
    "shellcheck",
    "python -m pytest", "python -m unittest", "python -m mypy", "python -m ruff", "python -m black",
    "python -m compileall", "python -m py_compile",
    "python3 -m pytest", "python3 -m unittest", "python3 -m mypy", "python3 -m ruff", "python3 -m black",
    "python3 -m compileall", "python3 -m py_compile",
    "mix test", "mix compile", "mix format", "mix credo", "mix dialyzer",
    "cargo test", "cargo build", "cargo check", "cargo clippy", "cargo fmt",
    "go test", "go build", "go vet", "go fmt", "go version", "go env",
    "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "javac", "kotlinc", "swiftc", "zig build",
    "cmake --build", "ninja", "dotnet build", "dotnet test",
    "npm test", "npm run test", "npm run build", "npm run lint", "npm run typecheck", "npm run type-check",
    "npm run check", "npm run format", "npm run compile", "npm ls", "npm list",
    "yarn test", "yarn lint", "yarn build", "yarn typecheck", "yarn run test", "yarn run build", "yarn run lint",
    "yarn run typecheck",
    "pnpm test", "pnpm lint", "pnpm build", "pnpm typecheck", "pnpm run test", "pnpm run build", "pnpm run lint",
    "pnpm run typecheck",
    "pip list", "pip show", "pip freeze", "pip check", "pip3 list", "pip3 show", "pip3 freeze",
)  # fmt: skip

# Programs that read, search, compare or rearrange files and print what they found, and
# programs that tell what this machine and this user are (`whoami`, `uname`, `ps`, `df`):
# the person's own system speaking.
LOCAL_PROGRAMS: frozenset[str] = frozenset(
    (
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "fd", "find", "tree",
        "file", "stat", "du", "diff", "cmp", "comm", "sort", "uniq", "cut", "tr", "sed", "awk", "jq",
        "column", "nl", "paste", "join", "fold", "fmt", "rev", "seq", "expr", "basename", "dirname",
        "realpath", "readlink", "pwd", "echo", "printf", "true", "false", "test", "[", "date", "sleep",
        "mkdir", "touch", "cp", "mv", "rm", "rmdir", "chmod", "ln", "tee", "cd", "pushd", "popd", "export",
        "unset", "which", "type", "bat", "less", "more", "xxd", "hexdump", "od", "strings",
        "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "cksum",
        "whoami", "id", "groups", "uname", "hostname", "arch", "nproc", "uptime", "df", "free", "ps",
        "lscpu", "lsblk", "locale", "tty", "getconf", "printenv", "sw_vers", "cal",
    )
)  # fmt: skip

# The same for PowerShell, where Codex runs its commands on Windows (`shell_command`):
# its cmdlets and their aliases, lower-cased, as the command is read lower-cased there.
WINDOWS_LOCAL_PROGRAMS: frozenset[str] = frozenset(
    (
        "get-content", "gc", "get-childitem", "gci", "dir", "select-string", "sls", "get-item", "gi",
        "get-itemproperty", "get-location", "gl", "set-location", "sl", "test-path", "resolve-path",
        "split-path", "join-path", "measure-object", "measure", "sort-object", "select-object", "select",
        "format-table", "ft", "format-list", "fl", "out-string", "write-output", "write-host",
        "get-filehash", "compare-object", "get-date", "get-command", "gcm", "findstr", "where.exe",
        "new-item", "ni", "copy-item", "copy", "move-item", "move", "remove-item", "del", "rename-item",
        "set-content", "add-content", "out-file", "get-process", "whoami.exe", "hostname.exe",
    )
)  # fmt: skip

# git subcommands that never talk to another repository (fetch, pull, push, clone,
# ls-remote, submodule update all do; `remote` is read per action, see `locality`).
LOCAL_GIT: frozenset[str] = frozenset(
    (
        "status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "ls-tree", "add",
        "commit", "checkout", "switch", "restore", "reset", "stash", "merge", "rebase", "tag",
        "blame", "grep", "worktree", "mv", "rm", "cherry-pick", "revert", "describe",
        "shortlog", "reflog", "cat-file", "rev-list", "merge-base", "symbolic-ref",
        "for-each-ref", "init", "config", "apply", "format-patch", "am", "clean", "notes",
        "check-ignore", "check-attr", "version", "show-ref", "show-branch", "name-rev", "range-diff",
        "whatchanged", "count-objects", "fsck", "bisect", "sparse-checkout", "hash-object", "diff-tree",
        "diff-index", "diff-files", "update-index", "write-tree", "read-tree", "var", "help",
        "verify-commit", "verify-tag", "cherry",
    )
)  # fmt: skip
# `git remote` actions that only read or edit the local configuration; `show` without
# `-n`, `update` and `prune` ask the remote itself.
LOCAL_GIT_REMOTE: frozenset[str] = frozenset(("-v", "--verbose", "get-url", "add", "remove", "rm", "rename",
                                              "set-url", "set-head", "set-branches"))

# A lone argument asking a program its version: what is installed here, not content.
VERSION_FLAGS: frozenset[str] = frozenset(("--version", "-V", "-v"))

# Words that make even a first-party tool a server or a watcher of requests: `make serve`,
# `bin/rails server`, `./manage.py runserver`. Its output is whatever reached it.
SERVING_WORDS: frozenset[str] = frozenset(("serve", "server", "runserver", "start", "dev", "preview", "up",
                                           "phx.server", "s"))
