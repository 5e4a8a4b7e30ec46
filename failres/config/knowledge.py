"""The `[policy]` and `[learning]` sections: what failres may keep and how it learns.

Declared like every other section (see `failres.config.model`), in a module of their own
because their rules live in the `lessons` library and are only mirrored here.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, ClassVar

from lessons.frozen import record
from failres.config.kinds import Duration, Integer, Text, TextList
from failres.config.schema import Invalid, KeyPath, Section, read_table, setting
from lessons.learning.trusted_commands import DEFAULT_TRUSTED_COMMANDS
from lessons.bounds.policy import PolicyProblem
from lessons.bounds.policy import check_value as check_policy_value
from lessons.bounds.policy import default_of as policy_default

_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# The files people's own agents read their instructions from: Codex (and many others)
# AGENTS.md, Claude Code CLAUDE.md, aider a CONVENTIONS.md it is told to read.
EXPORT_FILES = ("", "AGENTS.md", "CLAUDE.md", "CONVENTIONS.md")

# ---- the knowledge policy ----
# The keys, their ranges and the effective-policy logic live in `lessons.bounds.policy` (the
# library must stand without failres); this section only lets the reader and the example
# check see them, declared one per line like every other section.

@record
class PolicyValue:
    """A `[policy]` value, checked by the rule `lessons.bounds.policy` declares for `key`."""

    expected: ClassVar[str] = "a policy value"
    key: str

    def read(self, raw: object, path: KeyPath) -> object:
        try:
            return check_policy_value(self.key, raw)
        except PolicyProblem as problem:
            raise Invalid(path, problem.problem, hint=problem.hint) from None


@record
class PolicySection(Section):
    """The `[policy]` table; remembers which keys the file set, so `policy show` can say so."""

    def read(self, raw: object, path: KeyPath) -> object:
        if not isinstance(raw, dict):
            return super().read(raw, path)
        return read_table(self.cls, raw, path, file_keys=frozenset(raw))


def _policy(key: str) -> Any:
    return setting(policy_default(key), kind=PolicyValue(key))


@record
class PolicyConfig:
    """Bounds, budgets and lifecycle of the knowledge stores (see `lessons.bounds.policy.Policy`)."""

    max_lessons: int = _policy("max_lessons")
    max_reflections: int = _policy("max_reflections")
    max_journal_events: int = _policy("max_journal_events")
    max_proposals: int = _policy("max_proposals")
    max_facts: int = _policy("max_facts")
    reclaim_headroom_pct: float = _policy("reclaim_headroom_pct")
    reclaim_enabled: bool = _policy("reclaim_enabled")
    lessons_per_prompt: int = _policy("lessons_per_prompt")
    facts_per_prompt: int = _policy("facts_per_prompt")
    timeline_limit: int = _policy("timeline_limit")
    list_limit: int = _policy("list_limit")
    decay_rate: float = _policy("decay_rate")
    low_confidence_threshold: float = _policy("low_confidence_threshold")
    stale_days: int = _policy("stale_days")
    similarity_threshold: float = _policy("similarity_threshold")
    contradiction_threshold: float = _policy("contradiction_threshold")
    archive_reach: str = _policy("archive_reach")
    snapshot_retention_days: int = _policy("snapshot_retention_days")
    # Not a key: which keys the file itself set ("file" rather than "default" in `policy show`).
    file_keys: frozenset[str] = field(default=frozenset(), compare=False)


# ---- learning ----

def _env_name_problem(name: str) -> str | None:
    if name and not re.fullmatch(_ENV_NAME, name):
        return f'"{name}" is not a valid environment variable name'
    return None


def _rules_domain_problem(domain: str) -> str | None:
    # Imported here: the rules module brings the ledger and redaction, which a command
    # that only reads the configuration (`status`, `journal`) never needs at start-up.
    from lessons.rulebook.rules import DOMAIN_PATTERN as RULES_DOMAIN_PATTERN

    if not RULES_DOMAIN_PATTERN.fullmatch(domain):
        return f'"{domain}" is not a rules domain (lowercase letters, digits and "-", at most 40)'
    return None


def _trusted_command_problem(command: str) -> str | None:
    from lessons.learning.locality import TrustedCommands

    try:
        TrustedCommands.of([command])
    except ValueError as problem:
        return str(problem)
    return None


def _model_url_problem(url: str) -> str | None:
    if url and not re.match(r"https?://[^/\s]+", url):
        return f'must be an http:// or https:// URL, got "{url}"'
    return None


@record
class LearningConfig:
    """Which model, if any, turns interventions into reflections and reflections into
    proposed rules; where transcripts are found; the budget of learned rules."""

    provider: str = setting("none", kind=Text(choices=("none", "command", "http")))
    command: tuple[str, ...] = setting((), kind=TextList())
    url: str = setting("", kind=Text(check=_model_url_problem))
    model: str = setting("", kind=Text())
    api_key_env: str = setting("", kind=Text(check=_env_name_problem))
    timeout: float = setting(300.0, kind=Duration())
    transcripts: tuple[str, ...] = setting((), kind=TextList())
    # The repository's own tools, whose output keeps a session learnable (see
    # lessons.learning.locality); the list replaces the default, so it can also shrink it.
    trusted_commands: tuple[str, ...] = setting(DEFAULT_TRUSTED_COMMANDS,
                                                kind=TextList(check=_trusted_command_problem))
    domains: tuple[str, ...] = setting((), kind=TextList(check=_rules_domain_problem))
    max_rules: int = setting(15, kind=Integer(minimum=1, maximum=100))
    max_chars: int = setting(1600, kind=Integer(minimum=100, maximum=100_000))
    # The file of the person's own agent that `proposals accept` also writes the rules into
    # (failres.knowledge.rules_export); "" leaves it to `git failres rules export`.
    export: str = setting("", kind=Text(choices=EXPORT_FILES))

    def __post_init__(self) -> None:
        # A provider without what it needs would fail at the first model call, far from
        # the file that is wrong; refuse it where the key is.
        if self.provider == "command" and not self.command:
            raise Invalid(("learning", "command"), 'must name a program when provider = "command"')
        if self.provider == "http" and not self.url:
            raise Invalid(("learning", "url"), 'must be set when provider = "http"')
        if self.provider == "http" and not self.model:
            raise Invalid(("learning", "model"), 'must be set when provider = "http"')
