"""Rules: the short, human-approved directives that ride in every seat's prompt.

Per domain, two TOML files in the store tree (TOML because a person reads and
edits them, and `git diff` shows a rule change as a line change)::

    rules/<domain>.user.toml      the person's own rules -- never written by code
    rules/<domain>.learned.toml   written only when a person accepts a proposal

A rule outlives the pass that wrote it, so it carries its lineage: a stable `id`
(what the validation ledger keys on), `sources` (the reflections or lessons it was
argued from) and `created_at`, all kept when a later pass restates the same text
(see `lessons.rulebook.rule_lineage`). A rule measured harmful is retired, never deleted: a
retired rule stays in the file as evidence, is never rendered, and no later pass
can resurrect it.

The rendered block is one function (`render_rules_block`) used both by prompts and
by a proposal's preview, so what a reviewer accepts is byte for byte what a seat
will read. It carries at most the budget's worth of learned rules per domain, in
the file's order: learning never proposes past it, and a hand edit past it is cut
(and reported) rather than carried.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field

import pygit2

from lessons.frozen import record
from lessons.errors import CorruptRecord, InvalidInput
from lessons.rulebook.ledger import fnv1a64
from lessons.redaction.redact import redact_value
from lessons.storage.store import Store

log = logging.getLogger(__name__)

RULES_DIR = "rules"
KINDS = ("user", "learned")
DOMAIN_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
RULES_BLOCK_HEADING = "## Rules for this repository"
RULES_BLOCK_INTRO = (
    "Set by people, or learned from how they corrected earlier runs and approved by them.\n"
    "Follow them unless this task says otherwise."
)
# Fifteen because adherence falls off well before a long list ends, and the block
# rides in every prompt; ~1,600 characters is the size half of the same bound.
# User rules are not counted: they are the person's own budget to spend.
DEFAULT_MAX_RULES = 15
DEFAULT_MAX_CHARS = 1600

_FIELDS = ("text", "enabled", "confidence", "based_on_count", "id", "basis", "sources", "created_at",
           "retired_at", "retired_reason")


@record
class Rule:
    """One rule. Every field but `text` defaults, so a hand-written file of bare texts loads."""

    text: str
    enabled: bool = True
    confidence: float | None = None
    based_on_count: int | None = None
    id: str | None = None
    # Rules computed by code from counts (resolved lessons) name what was counted:
    # their text changes with the counts, their identity must not.
    basis: str | None = None
    sources: tuple[str, ...] = ()
    created_at: str | None = None
    # Set instead of deleting: a retired rule is evidence that something was tried
    # and measured harmful, which a deleted line cannot say.
    retired_at: str | None = None
    retired_reason: str | None = None

    def active(self) -> bool:
        """Whether it rides in prompts. Retirement wins over a hand edit that left
        `enabled = true`: the measurement trail outranks a stray toggle."""
        return self.enabled and self.retired_at is None

    def to_dict(self) -> dict:
        """The rule as stored: absent fields left out, so files stay short to read."""
        out: dict = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "enabled":
                if not value:
                    out[name] = False
                continue
            if value is None or value == ():
                continue
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def rule_from_dict(raw: Mapping[str, object], where: str) -> Rule:
    """A rule from a TOML table or a JSON object; InvalidInput naming `where` otherwise."""
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        msg = f"{where}: unknown key {unknown[0]!r} (known: {', '.join(_FIELDS)})"
        raise InvalidInput(msg)
    text = raw.get("text")
    if not isinstance(text, str) or not one_line(text):
        msg = f"{where}: a rule needs a non-empty text"
        raise InvalidInput(msg)
    sources = _typed(raw, "sources", (list, tuple), where) or ()
    if any(not isinstance(s, str) for s in sources):
        msg = f"{where}: sources must be strings"
        raise InvalidInput(msg)
    enabled = _typed(raw, "enabled", (bool,), where)
    confidence = _typed(raw, "confidence", (int, float), where)
    return Rule(
        text=one_line(text),
        enabled=True if enabled is None else enabled,
        confidence=None if confidence is None else float(confidence),
        based_on_count=_typed(raw, "based_on_count", (int,), where),
        id=_typed(raw, "id", (str,), where),
        basis=_typed(raw, "basis", (str,), where),
        sources=tuple(sources),
        created_at=_typed(raw, "created_at", (str,), where),
        retired_at=_typed(raw, "retired_at", (str,), where),
        retired_reason=_typed(raw, "retired_reason", (str,), where),
    )


def _typed(raw: Mapping[str, object], name: str, kinds: tuple[type, ...], where: str):
    """The value of `name` when it has one of `kinds` (a boolean is no number); None when absent."""
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        msg = f"{where}: {name} has the wrong type ({type(value).__name__})"
        raise InvalidInput(msg)
    return value


def one_line(text: str) -> str:
    """A rule is one line of the block: runs of whitespace, newlines included, become one space."""
    return " ".join(text.split())


# ── files in the store ───────────────────────────────────────────────────────


def check_domain(domain: str) -> str:
    if not DOMAIN_PATTERN.fullmatch(domain):
        msg = f"invalid rules domain {domain!r} (lowercase letters, digits and '-', at most 40)"
        raise InvalidInput(msg)
    return domain


def rules_path(domain: str, kind: str) -> str:
    if kind not in KINDS:
        msg = f"rules kind must be one of {KINDS}, not {kind!r}"
        raise InvalidInput(msg)
    return f"{RULES_DIR}/{check_domain(domain)}.{kind}.toml"


def parse_rules(text: str, where: str) -> tuple[Rule, ...]:
    """The rules of one file: `[[rules]]` tables. InvalidInput naming `where` when malformed."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = f"{where}: malformed TOML: {exc}"
        raise InvalidInput(msg) from None
    extra = sorted(set(document) - {"rules"})
    if extra:
        msg = f"{where}: unknown key {extra[0]!r} (a rules file holds [[rules]] tables)"
        raise InvalidInput(msg)
    tables = document.get("rules", [])
    if not isinstance(tables, list) or any(not isinstance(t, dict) for t in tables):
        msg = f"{where}: rules must be [[rules]] tables"
        raise InvalidInput(msg)
    return tuple(rule_from_dict(t, f"{where}: rules[{i}]") for i, t in enumerate(tables))


def rules_toml(rules: Sequence[Rule], domain: str) -> bytes:
    """The learned file's canonical bytes (the same rules always give the same bytes)."""
    header = (
        f"# Learned rules of the {domain} domain, written when a person accepted a proposal\n"
        "# (git failres proposals accept). Retired rules stay as evidence and are never shown\n"
        "# to a seat. To undo an acceptance: git failres undo <that store commit>.\n\n"
    )
    # Redacted exactly as a record is (`lessons.storage.records.encode`), so the file an
    # acceptance writes equals the proposal's rules, field for field.
    import tomli_w  # only an acceptance writes rules; every prompt reads them

    body = tomli_w.dumps({"rules": [redact_value(r.to_dict()) for r in rules]})
    return (header + body).encode("utf-8")


def load_rules(store: Store, domain: str, kind: str, commit: pygit2.Commit | None = None) -> tuple[Rule, ...]:
    """One domain's rules of one kind at `commit` (the tip by default); () when absent.

    Raises CorruptRecord when the file is there but unreadable.
    """
    path = rules_path(domain, kind)
    raw = store.read_bytes(path, commit)
    if raw is None:
        return ()
    try:
        return parse_rules(raw.decode("utf-8"), path)
    except UnicodeDecodeError:
        raise CorruptRecord(path, "not UTF-8 text") from None
    except InvalidInput as exc:
        raise CorruptRecord(path, str(exc).removeprefix(path + ": ")) from None


def domains_in(store: Store, commit: pygit2.Commit | None = None) -> list[str]:
    """Domains that have a rules file of either kind, sorted."""
    found: set[str] = set()
    for name in store.list_dir(RULES_DIR, commit):
        for kind in KINDS:
            domain = name.removesuffix(f".{kind}.toml")
            if domain != name and DOMAIN_PATTERN.fullmatch(domain):
                found.add(domain)
    return sorted(found)


# ── rendering ────────────────────────────────────────────────────────────────


def domain_section(domain: str, user: Sequence[Rule], learned: Sequence[Rule]) -> str:
    """One domain's part of the block: user rules first, then active learned ones; "" when none."""
    lines = [f"- {one_line(r.text)}" for r in (*user, *learned) if r.active()]
    return f"### {domain}\n" + "\n".join(lines) if lines else ""


def wrap_rules_block(sections: Iterable[str]) -> str:
    """The whole block; "" when every section is empty (a heading alone would be noise)."""
    present = [s for s in sections if s]
    if not present:
        return ""
    return f"{RULES_BLOCK_HEADING}\n\n{RULES_BLOCK_INTRO}\n\n" + "\n\n".join(present) + "\n"


def render_rules_block(sets: Sequence[tuple[str, Sequence[Rule], Sequence[Rule]]]) -> str:
    """The block for explicit (domain, user, learned) sets, in the order given."""
    return wrap_rules_block(domain_section(d, u, learned) for d, u, learned in sets)


@record
class RulesInForce:
    """What a prompt would carry now: the block, its ledger key, and the learned rules in it.

    `sets` hold every learned rule of each domain (for listings); `dropped` the active
    learned rules left out of the block because the domain is over its budget.
    """

    block: str
    block_hash: str
    rule_ids: tuple[str, ...]
    sets: tuple[tuple[str, tuple[Rule, ...], tuple[Rule, ...]], ...] = ()
    problems: tuple[str, ...] = field(default=())
    dropped: tuple[tuple[str, Rule], ...] = ()


def within_budget(learned: Sequence[Rule], budget: Budget) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """(what rides, the active rules that do not): active learned rules in the file's
    order while they fit the budget's count and characters.

    Learning never proposes past the budget, but a person can edit the file by hand;
    the prompt still carries no more than the budget, and `rules` says what it left out.
    """
    riding: list[Rule] = []
    dropped: list[Rule] = []
    count = chars = 0
    for rule in learned:
        if not rule.active():
            riding.append(rule)  # never rendered; kept so the set reads as the file does
            continue
        size = len(f"- {one_line(rule.text)}\n")
        if count < budget.max_rules and chars + size <= budget.max_chars:
            riding.append(rule)
            count, chars = count + 1, chars + size
        else:
            dropped.append(rule)
    return tuple(riding), tuple(dropped)


def rules_in_force(store: Store, domains: Sequence[str] | None = None, *,
                   learned_override: Mapping[str, Sequence[Rule]] | None = None,
                   commit: pygit2.Commit | None = None, budget: Budget | None = None) -> RulesInForce:
    """The rules block of the store at `commit` (the tip by default).

    `domains` limits it to those domains (None or empty: every domain with a file).
    `learned_override` replaces a domain's learned rules: that is how a proposal's
    preview renders a candidate exactly as a run would see it after acceptance.
    Each domain's learned rules are cut to `budget` (the default budget when None).
    An unreadable file costs that file's rules, never the run; it is reported.
    """
    budget = budget or Budget()
    commit = commit if commit is not None else store.commit_at()
    override = dict(learned_override or {})
    wanted = list(domains) if domains else sorted(set(domains_in(store, commit)) | set(override))
    sets = []
    problems = []
    for domain in wanted:
        kinds: dict[str, tuple[Rule, ...]] = {}
        for kind in KINDS:
            if kind == "learned" and domain in override:
                kinds[kind] = tuple(override[domain])
                continue
            try:
                kinds[kind] = load_rules(store, domain, kind, commit)
            except CorruptRecord as problem:
                log.warning("rules file skipped: %s", problem)
                problems.append(str(problem))
                kinds[kind] = ()
        sets.append((domain, kinds["user"], kinds["learned"]))
    riding = [(domain, user, within_budget(learned, budget)) for domain, user, learned in sets]
    block = render_rules_block([(domain, user, kept) for domain, user, (kept, _) in riding])
    ids = tuple(r.id for _, _, (kept, _) in riding for r in kept if r.active() and r.id)
    dropped = tuple((domain, rule) for domain, _, (_, left) in riding for rule in left)
    return RulesInForce(block, fnv1a64(block), ids, tuple(sets), tuple(problems), dropped)


def rules_block(store: Store, domains: Sequence[str] | None = None, budget: Budget | None = None) -> str:
    """The block a seat's prompt carries: user rules first, then active learned rules
    within the budget, per domain; "" when there are none."""
    return rules_in_force(store, domains, budget=budget).block


# ── the budget ───────────────────────────────────────────────────────────────


@record
class Budget:
    """How much learned text a domain may put in every prompt."""

    max_rules: int = DEFAULT_MAX_RULES
    max_chars: int = DEFAULT_MAX_CHARS


def learned_size(rules: Sequence[Rule]) -> tuple[int, int]:
    """(active learned rules, characters they add to the block)."""
    active = [r for r in rules if r.active()]
    return len(active), sum(len(f"- {one_line(r.text)}\n") for r in active)


def budget_problem(before: Sequence[Rule], after: Sequence[Rule], budget: Budget) -> str | None:
    """Why the gate refuses `after`, or None.

    A set over the budget may only grow when it stays within it; an already
    over-budget set may shrink or be rewritten at the same size, or the refusal
    would wedge the very store it exists to shrink.
    """
    count_before, chars_before = learned_size(before)
    count_after, chars_after = learned_size(after)
    if count_after > budget.max_rules and count_after > count_before:
        return f"{count_after} active learned rules, more than the budget of {budget.max_rules}"
    if chars_after > budget.max_chars and chars_after > chars_before:
        return f"{chars_after} characters of learned rules, more than the budget of {budget.max_chars}"
    return None
