"""A claim on a task: what its commit says, and the pure rules about who may take it.

A claim is a commit with the empty tree whose message holds `key: value` lines, so
`git log -p refs/failres/claims/<slug>/<task>` on the remote reads as who held the
task when. Each new claim commit has the one it replaces as its parent: the chain is
the task's claim history. The states:

- `held`: a runner works the task until `until` (it renews the claim before then);
- `committed`: the holder pushed the task branch in the same atomic push (`commit`);
- `quarantined`: the holder's run quarantined the task;
- `released`: the holder stopped (a signal, an error) without a result; anyone may claim it;
- `cancelled`: a person asked the holder to stop (`cancel --remote`); nobody takes it
  over until a runner is told to run that task again (`--task`).

Who may take a claim is decided without trusting clocks across machines: a held
claim is expired for a runner only when that runner has seen the same claim commit
(each renewal is a new one), unrenewed, for a whole lease on its own monotonic clock.
Its `until` is never compared with the observer's clock: a runner whose clock ran
five minutes ahead read every live, renewing claim as long expired and took them all.
A `committed` claim is trusted only while the task branch it names is on the remote:
one without it (written by hand, or by a runner that lost its push) is judged like
a held claim, so the task is taken once that claim has stood unchanged for a lease.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import re
from datetime import UTC, datetime, timedelta

CLAIMS_PREFIX = "refs/failres/claims/"
STATES = ("held", "committed", "quarantined", "released", "cancelled")
FINISHED = ("committed", "quarantined", "cancelled")  # nobody claims these without being told to
_FIELDS = ("state", "host", "pid", "run", "since", "until", "commit", "intHead", "cancelledBy")


def claim_ref(slug: str, task: str) -> str:
    return f"{CLAIMS_PREFIX}{slug}/{task}"


def format_ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# What `format_ts` writes (and what strptime's "%Y-%m-%dT%H:%M:%S.%fZ" read before): read by
# hand, since `strptime` imports its locale machinery (about 3 ms) into every `status --remote`.
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{1,6})Z", re.ASCII)


def parse_ts(text: str) -> datetime | None:
    found = _TS.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    *fields, fraction = found.groups()
    try:
        return datetime(*map(int, fields), int(fraction.ljust(6, "0")), tzinfo=UTC)
    except ValueError:
        return None


@dataclass(frozen=True)
class Claim:
    """One claim commit's fields; `oid` is the commit (empty for one not written yet)."""

    slug: str
    task: str
    state: str
    host: str
    pid: int
    run: str  # the holding runner's id: host and pid alone repeat across machines and reboots
    since: str  # when this runner took the task
    until: str  # the holder renews before this; a claim not renewed by then may be taken over
    commit: str = ""  # the task commit, for `committed`
    int_head: str = ""
    cancelled_by: str = ""
    oid: str = ""  # for a claim read from the record of finished tasks (`folded`), its entry's blob
    folded: bool = False  # read from the plan's record of finished tasks, not from a claim ref
    folded_from: str = ""  # for a folded claim, the claim commit it was folded from

    def message(self) -> str:
        """The commit message: a summary line, then one `key: value` line per field."""
        summary = f"failres claim {self.slug}/{self.task}: {self.state} by {self.host} pid {self.pid}"
        values = {"state": self.state, "host": self.host, "pid": str(self.pid), "run": self.run,
                  "since": self.since, "until": self.until, "commit": self.commit, "intHead": self.int_head,
                  "cancelledBy": self.cancelled_by}
        body = "".join(f"{key}: {values[key]}\n" for key in _FIELDS if values[key])
        return f"{summary}\n\n{body}"

    def lease_left(self, now: datetime) -> float | None:
        """Seconds until `until` by this machine's clock (negative once past); None when not held."""
        until = parse_ts(self.until)
        if self.state != "held" or until is None:
            return None
        return (until - now).total_seconds()

    def renewed(self, now: datetime, lease: float) -> Claim:
        return replace(self, until=format_ts(now + timedelta(seconds=lease)), oid="")

    def finished_as(self, state: str, **fields: str) -> Claim:
        return replace(self, state=state, oid="", **fields)

    @property
    def expected(self) -> str:
        """What the claim ref must name for a push replacing this claim: "" (absent) once folded."""
        return "" if self.folded else self.oid

    @property
    def last_commit(self) -> str:
        """The claim commit a new claim of the task follows (its parent)."""
        return self.folded_from if self.folded else self.oid


def parse_claim(slug: str, task: str, message: str, oid: str) -> Claim | None:
    """The claim a commit message describes; None for a message that is not one (read past)."""
    fields: dict[str, str] = {}
    for line in message.splitlines()[1:]:
        key, sep, value = line.partition(": ")
        if sep and key in _FIELDS:
            fields[key] = value.strip()
    if fields.get("state") not in STATES:
        return None
    try:
        pid = int(fields.get("pid", "0"))
    except ValueError:
        pid = 0
    return Claim(slug, task, fields["state"], fields.get("host", ""), pid, fields.get("run", ""),
                 fields.get("since", ""), fields.get("until", ""), fields.get("commit", ""),
                 fields.get("intHead", ""), fields.get("cancelledBy", ""), oid)


def new_claim(slug: str, task: str, *, host: str, pid: int, run: str, now: datetime, lease: float,
              int_head: str = "") -> Claim:
    return Claim(slug, task, "held", host, pid, run, format_ts(now), format_ts(now + timedelta(seconds=lease)),
                 int_head=int_head)


@dataclass(frozen=True)
class Verdict:
    """What a runner may do about one task now."""

    may_claim: bool
    why: str  # for a person: who holds it, or what it is


def claim_verdict(claim: Claim | None, *, unchanged_for: float, lease: float, run: str, explicit: bool,
                  branch_behind: bool = True) -> Verdict:
    """Whether this runner may claim a task whose claim ref reads `claim` (None: no ref).

    Asked only about tasks this runner is not running now. `unchanged_for`: how long this
    runner has seen that same claim commit (its own monotonic clock). `explicit`: the runner
    was told to run this task (`--task`), which claims a quarantined or cancelled task again;
    a committed one never. `branch_behind`: for a committed claim, whether the remote's task
    branch names its commit; without it the claim proves nothing.
    """
    if claim is None:
        return Verdict(True, "unclaimed")
    if claim.state == "released":
        return Verdict(True, "released")
    expired = unchanged_for >= lease
    if claim.state == "committed" and branch_behind:
        return Verdict(False, f"committed by {claim.host} pid {claim.pid}")
    if claim.state == "committed":
        why = f"committed by {claim.host} pid {claim.pid} without its branch on the remote"
        return Verdict(expired, f"{why}: {'taken as unclaimed' if expired else 'not trusted'}")
    if claim.state == "quarantined":
        return Verdict(explicit, f"quarantined on {claim.host} pid {claim.pid}")
    if claim.state == "cancelled":
        # Its holder may not have read the cancel yet: only once its lease has run out.
        return Verdict(explicit and expired, f"cancelled on {claim.host} pid {claim.pid}")
    if claim.run == run:
        # Asked only about tasks this runner is not running: a claim of its own that it lost
        # (cut off, it stopped the task) and that nobody took over; its seat is gone.
        return Verdict(True, "this runner's own earlier claim")
    if expired:
        return Verdict(True, f"lease of {claim.host} pid {claim.pid} expired")
    return Verdict(False, f"held by {claim.host} pid {claim.pid}")
