"""`gc --remote REMOTE`: the remote keeps the refs of tasks still in play, not of every task ever run.

A plan of ten thousand tasks left ten thousand claim refs and ten thousand task branches on
the remote, forever: every push then carried the remote's listing of all of them, and every
person's `git fetch` brought the branches home. Once a task has landed, its claim and its
branch say nothing any runner needs: the remote's journal says the task landed (a runner
reads that before it looks at claims, so a task without a claim is not run again), and the
integration branch holds its commit.

So for each task whose journal, in the remote's store, says it landed, and whose branch tip the
remote's integration branch contains, its task branch and its claim are removed from the
remote; a task landed by a squash or on a forge (its tip not merged) keeps its branch, and a
claim someone holds again is kept. Only refs on the remote are removed, in one atomic push
leased on each ref as it was read: a ref that moved meanwhile removes nothing at all. No object
is deleted anywhere, and nothing of this clone is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from failres.errors import GitError
from failres.gitops.git import first_error_line, try_git
from failres.landing.gc import Item
from failres.remote.claims import Claim, claim_ref
from failres.remote.folded import Record, record_ref, write_record
from failres.remote.wire import check_remote, push_statuses

KINDS = ("branch", "claim", "entry")


@dataclass(frozen=True)
class RemoteGcPlan:
    remove: tuple[tuple[Item, str], ...]  # each item with the oid its ref must still name
    keep: tuple[Item, ...]


def plan_remote_gc(landed: set[tuple[str, str]], tips: Mapping[tuple[str, str], str],
                   claims: Mapping[tuple[str, str], Claim], merged: Callable[[str], bool], *,
                   branches: str, integration: str, entries: bool = False) -> RemoteGcPlan:
    """What to remove from the remote (leased on the oid read) and what to keep, landed tasks only;
    `entries`: landed tasks' entries in their plan's record of finished tasks too."""
    remove: list[tuple[Item, str]] = []
    keep: list[Item] = []
    for key in sorted(set(tips) | set(claims)):
        if key not in landed:
            continue
        slug, task = key
        tip = tips.get(key)
        branch = f"{branches}/{slug}/{task}"
        if tip is not None and not merged(tip):
            keep.append(Item("branch", branch, f"landed but not merged into {integration} (a squash or a forge "
                                               f"merge); git push REMOTE --delete {branch}"))
            continue
        if tip is not None:
            remove.append((Item("branch", branch, f"landed and merged into {integration}"), tip))
        claim = claims.get(key)
        if claim is None:
            continue
        if claim.folded:
            if entries:  # only when asked: the record is one ref whatever it holds
                remove.append((Item("entry", f"{record_ref(slug)}:{task}", f"landed; it was {claim.state}"), ""))
            continue
        if claim.state == "held":
            keep.append(Item("claim", claim_ref(slug, task), f"landed, but held by {claim.host} pid {claim.pid}"))
        else:
            remove.append((Item("claim", claim_ref(slug, task), f"landed; its claim was {claim.state}"), claim.oid))
    return RemoteGcPlan(tuple(remove), tuple(keep))


@dataclass(frozen=True)
class RemoteGcResult:
    remote: str
    dry_run: bool
    removed: tuple[Item, ...]
    kept: tuple[Item, ...]

    def counts(self) -> dict[str, int]:
        return {kind: sum(1 for item in self.removed if item.kind == kind) for kind in KINDS}

    def document(self) -> dict[str, object]:
        counts = self.counts()
        return {"remote": self.remote, "dryRun": self.dry_run,
                "removed": {"branches": counts["branch"], "claims": counts["claim"], "entries": counts["entry"]},
                "items": [item.document() for item in self.removed], "kept": [item.document() for item in self.kept]}


def _by_task(listed: Mapping[str, str], prefix: str) -> dict[tuple[str, str], str]:
    found = {}
    for name, oid in listed.items():
        slug, _, task = name.removeprefix(prefix).partition("/")
        if name.startswith(prefix) and slug and task and "/" not in task:
            found[(slug, task)] = oid
    return found


def collect_remote_garbage(top: Path, store_ref: str, remote: str, *, integration: str, branches: str,
                           dry_run: bool, entries: bool = False) -> RemoteGcResult:
    from failres.engine.state import task_state
    from failres.journal import list_slugs, read_journal
    from failres.remote.transport import RemoteClaims, fetch_claims
    from failres.remote.view import fetched_view

    check_remote(top, remote)
    prefix = f"{branches.rstrip('/')}/"
    # The task branches come in the view's fetch, listed by protocol v2 under their prefix
    # alone; a glob `ls-remote` after it was a second connection that listed every ref.
    landed: set[tuple[str, str]] = set()
    with fetched_view(top, remote, store_ref, None, branches) as seen:
        store = seen.store
        for slug in list_slugs(store) if store is not None else ():
            journal = read_journal(store, slug)
            for task in {str(e.get("task")) for e in journal.events if e.get("task")}:
                if task_state(journal.for_task(task)) == "landed":
                    landed.add((slug, task))
    records: dict[str, Record] = {}
    claims = fetch_claims(top, remote, "", known=records)
    looked = RemoteClaims(top, remote, "")
    tips = _by_task({prefix + name: oid for name, oid in seen.branches.items()}, prefix)
    head = looked.fetch_tip(f"refs/heads/{integration}")
    repo = pygit2.Repository(str(top))

    def merged(tip: str) -> bool:
        if not head:
            return False
        try:
            return tip == head or repo.descendant_of(pygit2.Oid(hex=head), pygit2.Oid(hex=tip))
        except (KeyError, ValueError, pygit2.GitError):
            return False  # a tip not in the integration history fetched: not merged

    plan = plan_remote_gc(landed, tips, claims, merged, branches=prefix.rstrip("/"),
                          integration=f"{remote}/{integration}", entries=entries)
    removed = tuple(item for item, _ in plan.remove)
    if not dry_run and plan.remove:
        drops: dict[str, list[str]] = {}
        for item, _ in plan.remove:
            if item.kind == "entry":
                ref, _, task = item.name.partition(":")
                drops.setdefault(ref, []).append(task)
        rewritten = tuple((record_ref(slug), write_record(repo, record, [], tuple(drops[record_ref(slug)])),
                           record.oid) for slug, record in records.items() if record_ref(slug) in drops)
        _delete_refs(top, remote, tuple(r for r in plan.remove if r[0].kind != "entry"), rewritten)
    return RemoteGcResult(remote, dry_run, removed, plan.keep)


def _delete_refs(top: Path, remote: str, refs: tuple[tuple[Item, str], ...],
                 records: tuple[tuple[str, str, str], ...] = ()) -> None:
    """One atomic push deleting every ref, each leased on the oid it was read at, and moving each
    record (ref, new commit, commit read) with its entries dropped."""
    leases = [f"--force-with-lease={item.name}:{oid}" for item, oid in refs]
    leases += [f"--force-with-lease={ref}:{old}" for ref, _, old in records]
    specs = [f":{item.name}" for item, _ in refs] + [f"{new}:{ref}" for ref, new, _ in records]
    done = try_git(top, ["push", "--porcelain", "--atomic", "--no-verify", *leases, remote, *specs])
    statuses = push_statuses(done.stdout.decode("utf-8", "replace"))
    names = [item.name for item, _ in refs] + [ref for ref, _, _ in records]
    refused = [name for name in names if not statuses.get(name, (False, ""))[0]]
    if refused or done.returncode != 0:
        why = statuses.get(refused[0], (False, first_error_line(done.stderr)))[1] if refused else \
            first_error_line(done.stderr)
        msg = f"{remote} refused removing {refused[0] if refused else 'the refs'} ({why}): nothing was removed"
        raise GitError(msg, hint="a task's ref moved meanwhile, or the remote forbids deleting it; run gc --remote again")
