"""Where else a store lives: the repository's remotes that hold one, found without the network.

A person who clones a teammate's repository has no store yet (git does not fetch
`refs/failres/`), while the remote holds the team's. Telling them to create one
would start an unrelated empty store beside it; the right step is a sync. So
every "there is no store" answer asks here which remotes hold one, and `init`
takes that store instead of starting afresh.

What is looked at, and why nothing more:

- the remote-tracking copy of the store ref (`refs/remotes/<remote>/<ref>`), which a
  sync or a person's own fetch left: already here, read as it is;
- a remote whose URL (after git's `insteadOf` rewrites) is a repository on this
  machine (a path or a `file://` URL, the way teams share a bare repository on
  one host): opened in process and its ref read, as `git ls-remote` would, with
  no git process, no hook and nothing of its configuration run;
- any other remote (ssh, https, ...) would take a network round trip, which no
  command but `sync` makes: it is reported as unchecked, so a hint can say "if it
  has one" rather than claim it has, or has not.

Everything here only reads; a remote that cannot be opened is simply unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pygit2

_NO_SEARCH = 1  # GIT_REPOSITORY_OPEN_NO_SEARCH: that directory itself, never a repository above it


@dataclass(frozen=True)
class RemoteCopy:
    """A remote and what is known of its store: `commit` (None when unknown) and how it was seen."""

    remote: str
    commit: str | None
    seen: str  # "fetched" (a remote-tracking copy), "local" (its repository read here), "unchecked"


def tracking_ref(remote: str, ref: str) -> str:
    """Where a remote's `refs/X` is kept locally: `refs/remotes/<remote>/X`."""
    return f"refs/remotes/{remote}/{ref.removeprefix('refs/')}"


def local_path(url: str, base: Path) -> Path | None:
    """The directory a remote URL names on this machine, or None for a URL of another host.

    git's own rules: `file://` URLs and plain paths are local; `host:path` (scp
    style, a colon before any slash) and every other `scheme://` go over the network.
    """
    if not url:
        return None
    if url.startswith("file://"):
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            return None
        return Path(unquote(parts.path))
    if "://" in url:
        return None
    colon, slash = url.find(":"), url.find("/")
    if colon != -1 and (slash == -1 or colon < slash):
        return None  # scp-like host:path
    path = Path(url).expanduser()
    return path if path.is_absolute() else base / path


def _local_tip(path: Path, ref: str) -> str | None:
    """The commit `ref` names in the repository at `path`; None when it has none (or is none)."""
    if not path.is_dir():
        return None
    try:
        other = pygit2.Repository(str(path), _NO_SEARCH)
        target = other.references[ref].resolve().target
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return str(target) if isinstance(target, pygit2.Oid) else None


def remote_copies(repo: pygit2.Repository, ref: str, *, prefer: str | None = None) -> list[RemoteCopy]:
    """Every remote of `repo`, with what is known of its copy of the store at `ref`.

    Remotes known to hold a store come first (`prefer`, the remote a sync would
    use by default, first among them: else the checked-out branch's upstream, else
    "origin"), then those that could not be checked;
    remotes known to hold none are left out.
    """
    prefer = prefer or upstream_of_head(repo) or "origin"
    base = Path(repo.workdir) if repo.workdir else Path(repo.path)
    known: list[RemoteCopy] = []
    unchecked: list[RemoteCopy] = []
    try:
        remotes = list(repo.remotes)
    except pygit2.GitError:
        return []
    for remote in remotes:
        name = remote.name
        if not name:
            continue
        tracked = repo.references.get(tracking_ref(name, ref))
        target = tracked.target if tracked is not None else None
        if isinstance(target, pygit2.Oid):
            known.append(RemoteCopy(name, str(target), "fetched"))
            continue
        try:
            url = remote.url or ""
        except pygit2.GitError:
            url = ""
        path = local_path(url, base)
        if path is None:
            unchecked.append(RemoteCopy(name, None, "unchecked"))
            continue
        commit = _local_tip(path, ref)
        if commit is not None:
            known.append(RemoteCopy(name, commit, "local"))

    def order(copy: RemoteCopy) -> tuple[bool, str]:
        return (copy.remote != prefer, copy.remote)

    return sorted(known, key=order) + sorted(unchecked, key=order)


def sync_hint(copies: list[RemoteCopy]) -> str | None:
    """The words that name `git failres sync REMOTE`, for a hint; None when no remote may hold a store."""
    held = [copy for copy in copies if copy.seen != "unchecked"]
    if held:
        first = held[0].remote
        return f"{first} has one: take it with `git failres sync {first}`"
    if copies:
        first = copies[0].remote
        return f"if {first} has one, take it with `git failres sync {first}`"
    return None


def upstream_of_head(repo: pygit2.Repository) -> str | None:
    """The remote the checked-out branch pulls from (`branch.<name>.remote`), if it has one."""
    try:
        target = repo.references["HEAD"].target
    except (KeyError, pygit2.GitError):
        return None
    if not isinstance(target, str) or not target.startswith("refs/heads/"):
        return None
    key = f"branch.{target[len('refs/heads/'):]}.remote"
    try:
        value = repo.config[key] if key in repo.config else None
    except (KeyError, pygit2.GitError):
        return None
    return value if value and value != "." else None
