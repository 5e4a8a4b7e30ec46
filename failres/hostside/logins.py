"""The person's login in a dispatch's agent home, and a refreshed one accepted back only for the same account.

`agents.homes` says which of the person's files each CLI needs in its moved config dir
(pure). Here they are linked in before a dispatch and, after it, a login the agent
rewrote is carried back to the person's file: OAuth tokens rotate, and the person's next
run would otherwise hold a spent refresh token. But the file left in the dispatch home
is the seat's to write. A seat once left another account's token there, and failres
copied it over the person's `~/.claude/.credentials.json`: the person was logged in as
someone else. So a rewritten login is accepted only when it names the same account as
the person's own (`same_account`, pure, on the identities both files carry); otherwise
the person's file is kept and one warning says so. A login file that names no account
at all (Claude Code's holds tokens only) is never accepted back: an account that cannot
be compared is not the same account.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from failres.agents.homes import HomeLink, dispatch_homes, home_links
from failres.hostside import files

log = logging.getLogger("failres.hostside")

# The fields that name whose login a file is, in the CLIs' files and in an OpenID `id_token`.
_IDENTITY_KEYS = frozenset({"account_id", "accountId", "accountUuid", "account_uuid", "chatgpt_account_id",
                            "organizationUuid", "organization_uuid", "email", "sub", "user_id", "userId"})
_TOKEN_KEYS = frozenset({"id_token", "idToken"})
_DEPTH = 6


def account_identity(data: bytes) -> frozenset[tuple[str, str]] | None:
    """The account a login file names: its identity fields and those of its `id_token` (pure).

    None when the bytes are not a JSON object or name no account.
    """
    try:
        document = json.loads(data)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    found: set[tuple[str, str]] = set()
    _collect(document, found, _DEPTH)
    return frozenset(found) or None


def _collect(value: object, found: set[tuple[str, str]], depth: int) -> None:
    if depth <= 0:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _IDENTITY_KEYS and isinstance(item, str | int) and not isinstance(item, bool) and str(item):
                found.add((key, str(item)))
            elif key in _TOKEN_KEYS and isinstance(item, str):
                _collect(_jwt_claims(item), found, depth - 1)
            else:
                _collect(item, found, depth - 1)
    elif isinstance(value, list):
        for item in value[:32]:
            _collect(item, found, depth - 1)


def _jwt_claims(token: str) -> dict:
    """The claims of a JWT, unverified: what it says about whose it is, nothing more."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}
    return claims if isinstance(claims, dict) else {}


def same_account(person: bytes | None, fresh: bytes) -> bool:
    """Does `fresh` log in the account `person` logs in? Only when both name one, and it is the same (pure)."""
    if person is None:
        return False
    mine, theirs = account_identity(person), account_identity(fresh)
    return mine is not None and mine == theirs


# ---- the shell ----

def prepare_agent_homes(seat_env: Mapping[str, str], person_env: Mapping[str, str], home: Path, *,
                        root: Path | None = None) -> tuple[HomeLink, ...]:
    """Create each moved agent home and link in the person's files that exist; the links made.

    Below `root` (the directory failres made the task's dispatches in) every directory
    is made and every link placed without following a link on the way, so a link the
    seat planted never sends failres's own link elsewhere. Codex refuses to start when
    CODEX_HOME does not exist, so the directory is made even with nothing to link.
    """
    made = []
    for _, own in dispatch_homes(seat_env, person_env, home):
        relative = files.relative_below(own, root)
        if relative is not None:
            files.make_dirs_beneath(root, relative)
        else:
            files.make_person_dirs(own)
    for link in home_links(seat_env, person_env, home):
        if not files.is_person_file(link.source):
            continue
        relative = files.relative_below(link.target, root)
        try:
            placed = (files.link_beneath(root, relative, link.source) if relative is not None
                      else files.link_person_file(link.target, link.source))
        except OSError:
            placed = False
        if placed:
            made.append(link)
    return tuple(made)


def carry_back_logins(links: Sequence[HomeLink], *, root: Path | None = None) -> tuple[Path, ...]:
    """Copy each login the agent rewrote in its dispatch home back to the person's file, for the same account.

    Only a login that is no longer the link (the agent replaced it), is read without a
    link on the way (below `root`), parses as JSON naming the account the person's names,
    and differs from the person's copy, is carried; the person's file is replaced
    atomically, owner-only. Any other rewritten login leaves the person's file as it was,
    with one warning.
    """
    carried = []
    for link in links:
        if not link.login:
            continue
        relative = files.relative_below(link.target, root) if root is not None else None
        if relative is None:
            relative, base = Path(link.target.name), link.target.parent
        else:
            base = root
        if files.is_link_beneath(base, relative):
            continue  # still the link failres made: the agent wrote nothing of its own
        try:
            fresh = files.read_beneath(base, relative, limit=1 << 20)
        except OSError:
            continue
        person = files.read_person_file(link.source)
        if person == fresh:
            continue
        if not same_account(person, fresh):
            log.warning("failres: the login the agent left at %s does not name the account of %s; "
                        "%s is kept as it was (log in again there if the agent asks you to)",
                        link.target, link.source, link.source)
            continue
        files.replace_person_file(link.source, fresh)
        carried.append(link.source)
    return tuple(carried)
