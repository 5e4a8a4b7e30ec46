"""The git at the edge of the claim protocol: read the remote's claims, move them by compare-and-swap.

Everything goes through the git program, so every transport, credential helper and
URL rewrite the person configured works, exactly as for `sync`. A claim push always
carries `--force-with-lease=<ref>:<expected>`: the remote moves the ref only if it
still names the commit this runner last saw ("" = must not exist yet), which is the
whole lock. A result is pushed with `--atomic`: the task branch and the claim move
together or not at all, so a runner whose claim was taken over cannot publish.

Claims are fetched into `refs/remotes/<remote>/failres-claims/<slug>/<task>`, beside
(not under) the tracking refs `sync` writes, so the two never update the same refs; the
plan's task branches come in the same fetch, into `refs/remotes/<remote>/failres-view/tasks/`,
so one look at the remote says both who holds what and which committed claims have their
branch. Every fetch speaks protocol v2 with the plan's own prefixes: the remote then lists
only those refs (`ref-prefix`), not every ref it holds (at 20,000 refs, the whole listing
made a fetch with nothing new cost half a second). `ls-remote` with a glob does not narrow
the listing (git asks for everything and filters at home), so it is not used where a fetch
can answer. Fetches of one repository take turns, between threads and between processes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pygit2

from failres.errors import GitError
from failres.gitops.git import FALLBACK_EMAIL, FALLBACK_NAME, first_error_line, try_git
from failres.remote.claims import CLAIMS_PREFIX, Claim, claim_ref
from failres.remote.claims_seen import read_claims
from failres.remote.folded import Record, read_record, record_ref, write_record
from failres.remote.wire import DEFAULT_BRANCHES, FETCH_CONFIG, push_statuses, repo_turn, tip_in_ls_remote
from lessons.failpoints import failpoint

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
    with _FETCH_TURNS, repo_turn(git_dir, "claims.flock"):  # threads of one runner, then processes
        yield


@dataclass
class Traffic:
    """What one runner asked of the remote: counted, so a run (and the bench) can say what it cost."""

    pushes: int = 0
    rejected: int = 0  # pushes the remote answered with at least one ref refused
    fetches: int = 0
    listings: int = 0  # ls-remote round trips
    by_kind: dict[str, int] = field(default_factory=dict)

    def count(self, kind: str) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1


@dataclass(frozen=True)
class PlanLook:
    """One look at a plan on the remote: task -> claim, and task -> the commit its branch names there."""

    claims: dict[str, Claim]
    tips: dict[str, str]
    record: Record  # the plan's record of finished tasks (oid "" when the remote has none yet)


class RemoteClaims:
    """The claims of one plan on one remote, as one clone reads and writes them."""

    def __init__(self, top: Path, remote: str, slug: str, *, branches: str = DEFAULT_BRANCHES) -> None:
        self.top = top
        self.remote = remote
        self.slug = slug
        self.branches = branches.rstrip("/")  # where the remote keeps task branches: <branches>/<slug>/<task>
        self.git_dir = Path(pygit2.Repository(str(top)).path)
        self.traffic = Traffic()
        self.records: dict[str, Record] = {}  # the last records read: their unchanged subtrees are not read again

    def _git(self, *args: str):
        if args and args[0] == "ls-remote":
            self.traffic.listings += 1
        return try_git(self.top, list(args))

    def branch_ref(self, task: str) -> str:
        return f"{self.branches}/{self.slug}/{task}"

    def fetch(self) -> dict[str, Claim]:
        """task -> its claim on the remote now; a ref whose commit is no claim is read past."""
        self.traffic.fetches += 1
        found = fetch_claims(self.top, self.remote, self.slug, known=self.records)
        return {task: claim for (_, task), claim in found.items()}

    def look(self) -> PlanLook:
        """The plan's claims and task branch tips on the remote now, in one narrow fetch."""
        self.traffic.fetches += 1
        branches = f"{self.branches}/{self.slug}/"
        tracking = f"refs/remotes/{self.remote}/failres-view/tasks/{self.slug}/"
        found = fetch_claims(self.top, self.remote, self.slug, extra=(f"+{branches}*:{tracking}*",),
                             known=self.records)
        repo = pygit2.Repository(str(self.top))
        tips = {name[len(tracking):]: str(repo.references[name].target) for name in repo.references
                if name.startswith(tracking)}
        record = self.records.get(self.slug, Record(self.slug))
        return PlanLook({task: claim for (_, task), claim in found.items()}, tips, record)

    def fold(self, record: Record, finished: list[Claim], drops: tuple[str, ...] = ()) -> Record | None:
        """Fold `finished` claims into the plan's record (and drop `drops` entries) in one atomic push
        that deletes their claim refs, every ref leased on what was read; the new record, or None
        when a ref moved meanwhile (nothing moved). Unreachable when git could not push."""
        repo = pygit2.Repository(str(self.top))
        oid = write_record(repo, record, finished, drops)
        ref = record_ref(self.slug)
        refs = [claim_ref(c.slug, c.task) for c in finished]
        leases = [f"--force-with-lease={ref}:{record.oid}"]
        leases += [f"--force-with-lease={name}:{c.oid}" for name, c in zip(refs, finished)]
        failpoint("fold")
        self.traffic.pushes += 1
        self.traffic.count("fold")
        done = self._git("push", "--porcelain", "--no-verify", "--atomic", *leases, self.remote, f"{oid}:{ref}",
                         *(f":{name}" for name in refs))
        statuses = push_statuses(done.stdout.decode("utf-8", "replace"))
        if not statuses and done.returncode != 0:
            msg = f"git push {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        if first_refusal(statuses, [ref, *refs], first_error_line(done.stderr)) is not None:
            self.traffic.rejected += 1
            return None
        self.records[self.slug] = read_record(repo, self.slug, oid, record)
        return self.records[self.slug]

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
        self.traffic.pushes += 1
        self.traffic.count(claim.state if branch is None else f"{claim.state}+branch")
        done = self._git("push", "--porcelain", "--no-verify", *atomic, *leases, self.remote, *specs)
        statuses = push_statuses(done.stdout.decode("utf-8", "replace"))
        if not statuses and done.returncode != 0:
            msg = f"git push {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        refused = first_refusal(statuses, ([branch[0]] if branch else []) + [ref], first_error_line(done.stderr))
        if refused is None:
            return PushResult(True)
        self.traffic.rejected += 1
        return PushResult(False, refused[1], refused[0], remote_words(done.stderr))

    def remote_tip(self, ref: str) -> str:
        """The commit `ref` names on the remote now; "" when it does not exist."""
        done = self._git("ls-remote", self.remote, ref)
        if done.returncode != 0:
            msg = f"git ls-remote {self.remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        return tip_in_ls_remote(done.stdout, ref) or ""

    def fetch_tip(self, ref: str) -> str:
        """Fetch `ref` from the remote and say which commit it names there ("" when absent).

        Into a tracking ref of failres's own (`failres-view/`), never the person's
        `refs/remotes/<remote>/<branch>`: a fetch there while a seat runs would read as
        the seat's move to the tamper check.
        """
        tracking = f"refs/remotes/{self.remote}/failres-view/{ref.removeprefix('refs/').replace('/', '-')}"
        with _fetch_turn(self.git_dir):
            self.traffic.fetches += 1
            done = try_git(self.top, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", self.remote,
                                      f"+{ref}:{tracking}"], config=FETCH_CONFIG)
            if done.returncode != 0:
                if not self.remote_tip(ref):
                    return ""
                msg = f"git fetch {self.remote} failed: {first_error_line(done.stderr)}"
                raise Unreachable(msg, hint="check the remote with `git remote -v`")
            tip = self._git("rev-parse", "--verify", "--quiet", f"{tracking}^{{commit}}")
        return tip.stdout.decode().strip() if tip.returncode == 0 else ""


def fetch_claims(top: Path, remote: str, slug: str = "", *, extra: tuple[str, ...] = (),
                 known: dict[str, Record] | None = None) -> dict[tuple[str, str], Claim]:
    """(slug, task) -> its claim on the remote now, for one plan (or, slug "", every plan), finished
    tasks' entries of each plan's record included; `extra`: refspecs fetched by the same `git fetch`
    (one connection); `known`: slug -> its record as last read, updated in place."""
    prefix = f"refs/remotes/{remote}/failres-claims/" + (f"{slug}/" if slug else "")
    spec = f"+{CLAIMS_PREFIX}{slug + '/' if slug else ''}*:{prefix}*"
    repo = pygit2.Repository(str(top))
    with _fetch_turn(Path(repo.path)):
        # No reflog for these copies: they are re-read from the remote before every use.
        done = try_git(top, ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote, spec,
                             *extra], config=FETCH_CONFIG)
        if done.returncode != 0:
            msg = f"git fetch {remote} failed: {first_error_line(done.stderr)}"
            raise Unreachable(msg, hint="check the remote with `git remote -v`")
        repo = pygit2.Repository(str(top))
        claims, records = read_claims(repo, f"refs/remotes/{remote}/failres-claims/", prefix, known)
        if known is not None:
            known.clear()
            known.update(records)
        return claims
