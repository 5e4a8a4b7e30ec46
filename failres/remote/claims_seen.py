"""The claims one fetch brought, read from their tracking refs.

Over pygit2's repository or a `PlainRepository` (`lessons.storage.plain_repo`): a look at
the remote reads claims without loading libgit2, a runner with the repository it has open.
"""

from __future__ import annotations

from failres.remote.claims import Claim, parse_claim
from failres.remote.folded import RECORD_NAME, Record, read_record


def claim_of_ref(repo, name: str, base: str) -> Claim | None:
    """The claim the fetched copy `name` (`<base><slug>/<task>`) holds; None for a ref or commit that is none."""
    slug, _, task = name[len(base):].partition("/")
    commit = repo.get(repo.references[name].target)
    if not task or "/" in task or getattr(commit, "type_str", None) != "commit":
        return None
    return parse_claim(slug, task, commit.message, str(commit.id))


def read_claims(repo, base: str, prefix: str, known: dict[str, Record] | None = None
                ) -> tuple[dict[tuple[str, str], Claim], dict[str, Record]]:
    """(slug, task) -> claim of the fetched copies under `prefix` (`<base>[<slug>/]`), each plan's record
    of finished tasks read in (a claim ref outranks its task's entry: a task run again is claimed anew),
    and slug -> that record. CorruptRecord when a record is not one to read."""
    claims: dict[tuple[str, str], Claim] = {}
    records: dict[str, Record] = {}
    for name in repo.references:
        if not name.startswith(prefix):
            continue
        slug, _, task = name[len(base):].partition("/")
        if task == RECORD_NAME:
            records[slug] = read_record(repo, slug, str(repo.references[name].target), (known or {}).get(slug))
            continue
        claim = claim_of_ref(repo, name, base)
        if claim is not None:
            claims[(claim.slug, claim.task)] = claim
    merged = {(slug, task): claim for slug, record in records.items() for task, claim in record.entries.items()}
    merged.update(claims)
    return merged, records
