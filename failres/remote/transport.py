"""The git at the edge of the claim protocol: read the remote's claims, move them by compare-and-swap.

Everything goes through the git program, so every transport, credential helper and
URL rewrite the person configured works, exactly as for `sync`. A claim push always
carries `--force-with-lease=<ref>:<expected>`: the remote moves the ref only if it
still names the commit this runner last saw ("" = must not exist yet), which is the
whole lock. A result is pushed with `--atomic`: the task branch and the claim move
together or not at all, so a runner whose claim was taken over cannot publish.

Claims are fetched into `refs/remotes/<remote>/failres-claims/<slug>/<task>`, beside
(not under) the tracking refs `sync` writes, so the two never update the same refs.
Fetches of one repository take turns, between threads and between processes.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pygit2

from failres.errors import GitError
from failres.gitops.git import FALLBACK_EMAIL, FALLBACK_NAME, first_error_line, try_git
from failres.remote.claims import CLAIMS_PREFIX, Claim, claim_ref, parse_claim
from failres.remote.sync import push_statuses, tip_in_ls_remote

_FETCH_TURNS = threading.Lock()


class Unreachable(GitError):
    """The remote could not be reached (or refused to talk): nothing was moved."""


@dataclass(frozen=True)
class PushResult:
    """Whether every ref of one push moved; for the first that did not, which and git's words."""

    accepted: bool
    reason: str = ""
    ref: str = ""
    words: str = ""  # what the remote itself said (`remote:` lines: a hook's message), bounded


# What git says of the other refs of an atomic push that one refused ref took down with it.
_ATOMIC_FALLOUT = ("atomic push failure", "atomic push failed", "atomic transaction failed")
_WORDS_LIMIT = 500


def remote_words(stderr: bytes) -> str:
    """The remote's own lines of a push's stderr (a pre-receive hook's message), on one line."""
    lines = [line.removeprefix("remote:").strip() for line in stderr.decode("utf-8", "replace").splitlines()
             if line.startswith("remote:")]
    return " ".join(line for line in lines if line)[:_WORDS_LIMIT]


def first_refusal(statuses: dict[str, tuple[bool, str]], refs: list[str], fallback: str) -> tuple[str, str] | None:
    """(ref, reason) of the ref that refused a push, past the refs an atomic push refused with it; None: all moved."""
    refused = [(ref, statuses.get(ref, (False, fallback))[1]) for ref in refs
               if not statuses.get(ref, (False, fallback))[0]]
    if not refused:
        return None
    causes = [(ref, reason) for ref, reason in refused if not any(f in reason for f in _ATOMIC_FALLOUT)]
    return (causes or refused)[0]


@contextmanager
def _fetch_turn(git_dir: Path):
    directory = git_dir / "failres"
    directory.mkdir(parents=True, exist_ok=True)
    with _FETCH_TURNS:
        fd = os.open(directory / "claims.flock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


class RemoteClaims:
    """The claims of one plan on one remote, as one clone reads and writes them."""

    def __init__(self, top: Path, remote: str, slug: str) -> None:
        self.top = top
        self.remote = remote
        self.slug = slug
        self.git_dir = Path(pygit2.Repository(str(top)).path)

    def _git(self, *args: str):
        return try_git(self.top, list(args))

    def fetch(self) -> dict[str, Claim]:
        """task -> its claim on the remote now; a ref whose commit is no claim is read past."""
        return {task: claim for (_, task), claim in fetch_claims(self.top, self.remote, self.slug).items()}

    def write(self, claim: Claim, parent: str) -> Claim:
        """The claim as a commit in the local object store (pushed by `swap`); parent: the one it replaces."""
        repo = pygit2.Repository(str(self.top))
        tree = repo.TreeBuilder().write()
        sig = pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)
        parents = [pygit2.Oid(hex=parent)] if parent and repo.get(parent) is not None else []
        oid = repo.create_commit(None, sig, sig, claim.message(), tree, parents)
        return replace(claim, oid=str(oid))

    def swap(self, claim: Claim, expected: str, *, branch: tuple[str, str, str] | None = None) -> PushResult:
        """Move the claim ref from `expected` ("" = absent) to `claim` (written), atomically with
        `branch` = (ref, new commit, expected old value) when given. Unreachable when git could not push."""
        ref = claim_ref(claim.slug, claim.task)
        leases = [f"--force-with-lease={ref}:{expected}"]
        specs = [f"{claim.oid}:{ref}"]
        if branch is not None:
            branch_ref, commit, old = branch
            leases.append(f"--force-with-lease={branch_ref}:{old}")
            specs.append(f"{commit}:{branch_ref}")
        atomic = ["--atomic"] if branch is not None else []
        # No --quiet: with it, git leaves accepted refs out of the porcelain report.
        done = self._git("push", "--porcelain", "--no-verify", *atomic, *leases, self.remote, *specs)
        statuses = push_statuses(done.stdout.decode("utf-8", "replace"))
        if not statuses and done.returncode != 0:
            msg = f"git push {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        refused = first_refusal(statuses, ([branch[0]] if branch else []) + [ref], first_error_line(done.stderr))
        if refused is None:
            return PushResult(True)
        return PushResult(False, refused[1], refused[0], remote_words(done.stderr))

    def remote_tip(self, ref: str) -> str:
        """The commit `ref` names on the remote now; "" when it does not exist."""
        done = self._git("ls-remote", self.remote, ref)
        if done.returncode != 0:
            msg = f"git ls-remote {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        return tip_in_ls_remote(done.stdout, ref) or ""


    def remote_tips(self, prefix: str) -> dict[str, str]:
        """ref -> commit of every ref under `prefix` on the remote now (one `ls-remote`)."""
        done = self._git("ls-remote", self.remote, f"{prefix}*")
        if done.returncode != 0:
            msg = f"git ls-remote {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        tips = {}
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            oid, _, name = line.partition("\t")
            if name.startswith(prefix):
                tips[name] = oid
        return tips

    def fetch_tip(self, ref: str) -> str:
        """Fetch `ref` from the remote and say which commit it names there ("" when absent).

        Into a tracking ref of failres's own (`failres-view/`), never the person's
        `refs/remotes/<remote>/<branch>`: a fetch there while a seat runs would read as
        the seat's move to the tamper check.
        """
        tracking = f"refs/remotes/{self.remote}/failres-view/{ref.removeprefix('refs/').replace('/', '-')}"
        with _fetch_turn(self.git_dir):
            done = try_git(self.top, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", self.remote,
                                      f"+{ref}:{tracking}"], config=("core.logAllRefUpdates=false",))
            if done.returncode != 0:
                if not self.remote_tip(ref):
                    return ""
                msg = f"git fetch {self.remote} failed: {first_error_line(done.stderr)}"
                raise Unreachable(msg, hint="check the remote with `git remote -v`")
            tip = self._git("rev-parse", "--verify", "--quiet", f"{tracking}^{{commit}}")
        return tip.stdout.decode().strip() if tip.returncode == 0 else ""


def fetch_claims(top: Path, remote: str, slug: str = "") -> dict[tuple[str, str], Claim]:
    """(slug, task) -> its claim on the remote now, for one plan (or, slug "", every plan)."""
    prefix = f"refs/remotes/{remote}/failres-claims/" + (f"{slug}/" if slug else "")
    spec = f"+{CLAIMS_PREFIX}{slug + '/' if slug else ''}*:{prefix}*"
    repo = pygit2.Repository(str(top))
    with _fetch_turn(Path(repo.path)):
        # No reflog for these copies: they are re-read from the remote before every use.
        done = try_git(top, ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote, spec],
                       config=("core.logAllRefUpdates=false",))
        if done.returncode != 0:
            msg = f"git fetch {remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        repo = pygit2.Repository(str(top))
        claims = {}
        base = f"refs/remotes/{remote}/failres-claims/"
        for name in repo.references:
            if not name.startswith(prefix):
                continue
            owner, _, task = name[len(base):].partition("/")
            commit = repo.get(repo.references[name].target)
            if task and "/" not in task and isinstance(commit, pygit2.Commit):
                claim = parse_claim(owner, task, commit.message, str(commit.id))
                if claim is not None:
                    claims[(owner, task)] = claim
        return claims
