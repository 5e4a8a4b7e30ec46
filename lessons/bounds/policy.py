"""The knowledge policy: how far each store may grow, how much reaches a prompt, how facts age.

Everything here is pure. The policy in force is built in three layers, each key
remembering which layer gave its value:

    default  (the field defaults of `Policy`)
    file     (the `[policy]` table of the configuration, checked by `check_value`)
    env      (`FAILRES_POLICY_<KEY>`, parsed by `parse_env_value`, checked the same way)

Environment variables win because they are how a CI job tightens or loosens one run
without editing the committed configuration. An unknown `FAILRES_POLICY_*` variable is
refused rather than ignored: a misspelt override that silently does nothing would let
a store grow past the bound its owner believes is set.

The lifecycle helpers at the end (age in whole days, decayed confidence, staleness)
take `now` as an argument, so two readers of the same store on the same day compute
the same numbers and `--json` output stays byte-identical.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import field
from datetime import UTC, datetime

from lessons.frozen import record
from lessons.errors import InvalidInput

ENV_PREFIX = "FAILRES_POLICY_"
SOURCES = ("default", "file", "env")
ARCHIVE_REACH = ("none", "timeline", "all")

_INTEGER = re.compile(r"[+-]?\d+")
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class PolicyProblem(InvalidInput):
    """One policy value is out of range or of the wrong type; `key` names it."""

    def __init__(self, key: str, problem: str, *, hint: str | None = None) -> None:
        super().__init__(f"{key}: {problem}", hint=hint)
        self.key = key
        self.problem = problem


@record
class Rule:
    """What a policy key may hold: bounds (inclusive, or exclusive `above`/`below`) or choices."""

    meaning: str
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    choices: tuple[str, ...] = ()


def _key(default: object, meaning: str, **bounds: object) -> object:
    return field(default=default, metadata={"policy": Rule(meaning, **bounds)})


_MAX_RECORDS = 10_000_000  # far beyond any store a person means; catches a stray extra digit


@record
class Policy:
    """The knowledge policy, defaults filled in. Field order is the order people see."""

    # Capacity: the most records a store holds before reclaim moves its tail to the archive.
    max_lessons: int = _key(5000, "lessons kept live", minimum=1, maximum=_MAX_RECORDS)
    max_reflections: int = _key(2000, "reflections kept live", minimum=1, maximum=_MAX_RECORDS)
    max_journal_events: int = _key(5000, "journal events kept live, per plan slug", minimum=1, maximum=_MAX_RECORDS)
    max_proposals: int = _key(500, "rule proposals kept live", minimum=1, maximum=_MAX_RECORDS)
    max_facts: int = _key(200, "fact versions kept live", minimum=1, maximum=_MAX_RECORDS)
    # Reclaim: a full store settles at floor(max * (1 - headroom)); the gap is what keeps
    # reclaim from running again on the very next write.
    reclaim_headroom_pct: float = _key(0.25, "share of a full store moved to the archive", above=0.0, below=1.0)
    reclaim_enabled: bool = _key(True, "reclaim to the settle target; false only caps the overflow")
    # Retrieval budgets: every listing is sorted first, then cut to these.
    lessons_per_prompt: int = _key(3, "past outcomes in one prompt", minimum=0, maximum=50)
    facts_per_prompt: int = _key(10, "project facts in one prompt", minimum=0, maximum=100)
    timeline_limit: int = _key(25, "versions a fact timeline shows", minimum=1, maximum=10_000)
    list_limit: int = _key(50, "rows a listing shows, and records one restore brings back",
                           minimum=1, maximum=100_000)
    # Lifecycle of facts.
    decay_rate: float = _key(0.01, "confidence lost per day without confirmation", minimum=0.0, below=1.0)
    low_confidence_threshold: float = _key(0.3, "below this (decayed) confidence a stale fact is a candidate",
                                           minimum=0.0, maximum=1.0)
    stale_days: int = _key(30, "days without confirmation after which a fact is stale", minimum=1, maximum=36500)
    similarity_threshold: float = _key(0.85, "word similarity at which two values are the same fact",
                                       above=0.0, maximum=1.0)
    contradiction_threshold: float = _key(0.5, "existing confidence at which a contradiction is medium",
                                          minimum=0.0, maximum=1.0)
    archive_reach: str = _key("timeline", "which reads see archived records: none, timeline or all",
                              choices=ARCHIVE_REACH)
    # Lifecycle of failure snapshots: a lesson's snapshot is how a person sees the failing
    # state; once its task has landed that need fades, and the ref keeps objects alive.
    snapshot_retention_days: int = _key(30, "days a landed task's failure snapshots are kept before gc drops them",
                                        minimum=0, maximum=36500)

    def capacity(self, store: str) -> int:
        """The maximum of a store by its name (lessons, reflections, journal, proposals, facts)."""
        name = "max_journal_events" if store == "journal" else f"max_{store}"
        if name not in POLICY_KEYS:
            msg = f"no capacity is defined for a store named {store!r}"
            raise InvalidInput(msg)
        return int(getattr(self, name))


POLICY_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Policy))
_FIELDS = {f.name: f for f in dataclasses.fields(Policy)}


def rule_of(key: str) -> Rule:
    return _FIELDS[key].metadata["policy"]


def default_of(key: str) -> object:
    return _FIELDS[key].default


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper()


# ---- checking one value ----

def _shown(raw: object) -> str:
    if isinstance(raw, str):
        return f'"{raw[:37]}..."' if len(raw) > 40 else f'"{raw}"'
    return repr(raw)


def _type_name(raw: object) -> str:
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, int):
        return "an integer"
    if isinstance(raw, float):
        return "a number"
    if isinstance(raw, str):
        return "a string"
    return f"a {type(raw).__name__}"


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def _bounds_problem(value: float, rule: Rule) -> str | None:
    lower = f"more than {_number(rule.above)}" if rule.above is not None else (
        f"at least {_number(rule.minimum)}" if rule.minimum is not None else None)
    upper = f"less than {_number(rule.below)}" if rule.below is not None else (
        f"at most {_number(rule.maximum)}" if rule.maximum is not None else None)
    too_low = (rule.above is not None and value <= rule.above) or (rule.minimum is not None and value < rule.minimum)
    too_high = (rule.below is not None and value >= rule.below) or (rule.maximum is not None and value > rule.maximum)
    if not (too_low or too_high):
        return None
    wanted = " and ".join(part for part in (lower, upper) if part)
    return f"must be {wanted}, got {_number(value)}"


def _closest_key(key: str) -> str | None:
    import difflib  # only for a key that was misspelt

    close = difflib.get_close_matches(key, POLICY_KEYS, n=1)
    return close[0] if close else None


def check_value(key: str, raw: object) -> object:
    """`raw` as the typed value of `key`; PolicyProblem naming the key when it does not fit."""
    if key not in _FIELDS:
        close = _closest_key(key)
        raise PolicyProblem(key, "unknown policy key", hint=f'did you mean "{close}"?' if close else None)
    default, rule = default_of(key), rule_of(key)
    if isinstance(default, bool):
        if not isinstance(raw, bool):
            raise PolicyProblem(key, f"expected a boolean (true or false), got {_type_name(raw)} ({_shown(raw)})")
        return raw
    if isinstance(default, str):
        if not isinstance(raw, str) or raw not in rule.choices:
            allowed = ", ".join(f'"{c}"' for c in rule.choices)
            raise PolicyProblem(key, f"must be one of {allowed}, got {_shown(raw)}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        expected = "an integer" if isinstance(default, int) else "a number"
        raise PolicyProblem(key, f"expected {expected}, got {_type_name(raw)} ({_shown(raw)})")
    if isinstance(default, int) and not isinstance(raw, int):
        raise PolicyProblem(key, f"expected an integer, got {_shown(raw)}")
    if not math.isfinite(raw):
        raise PolicyProblem(key, f"must be a finite number, got {raw!r}")
    problem = _bounds_problem(raw, rule)
    if problem:
        raise PolicyProblem(key, problem)
    return raw if isinstance(default, int) else float(raw)


def parse_env_value(key: str, text: str) -> object:
    """The typed value an environment variable's text stands for; checked like a file value."""
    default = default_of(key)
    stripped = text.strip()
    if isinstance(default, bool):
        lowered = stripped.lower()
        if lowered in _TRUE | _FALSE:
            return check_value(key, lowered in _TRUE)
        raise PolicyProblem(key, f'expected true or false, got "{text}"')
    if isinstance(default, str):
        return check_value(key, stripped)
    if isinstance(default, int):
        if not _INTEGER.fullmatch(stripped):
            raise PolicyProblem(key, f'expected an integer, got "{text}"')
        return check_value(key, int(stripped))
    try:
        number = float(stripped)
    except ValueError:
        raise PolicyProblem(key, f'expected a number, got "{text}"') from None
    return check_value(key, number)


# ---- the policy in force ----

@record
class Source:
    """Where one value came from: `default`, `file` or `env`, and which file or variable."""

    kind: str
    where: str = ""


@record
class EffectivePolicy:
    """The policy in force and, for each key, where its value came from."""

    policy: Policy
    sources: Mapping[str, Source]

    def rows(self) -> list[dict[str, object]]:
        """One row per key in declaration order, ready for a table or JSON."""
        return [
            {"key": key, "value": getattr(self.policy, key), "source": self.sources[key].kind,
             "from": self.sources[key].where, "meaning": rule_of(key).meaning}
            for key in POLICY_KEYS
        ]


def env_overrides(environ: Mapping[str, str]) -> dict[str, tuple[object, str]]:
    """key -> (value, variable) for every `FAILRES_POLICY_*` variable; refuses unknown ones."""
    found: dict[str, tuple[object, str]] = {}
    for variable in sorted(environ):
        if not variable.startswith(ENV_PREFIX):
            continue
        key = variable[len(ENV_PREFIX):].lower()
        if key not in _FIELDS:
            close = _closest_key(key)
            hint = f"did you mean {env_name(close)}?" if close else "see `git failres policy show` for the keys"
            raise PolicyProblem(variable, "is not a policy setting", hint=hint)
        try:
            found[key] = (parse_env_value(key, environ[variable]), variable)
        except PolicyProblem as problem:
            raise PolicyProblem(variable, problem.problem) from None
    return found


def effective_policy(file_values: Mapping[str, object], *, file_source: str = "",
                     environ: Mapping[str, str] | None = None) -> EffectivePolicy:
    """Defaults, overlaid by the file's values, overlaid by the environment's."""
    values: dict[str, object] = {}
    sources = {key: Source("default") for key in POLICY_KEYS}
    for key, raw in file_values.items():
        values[key] = check_value(key, raw)
        sources[key] = Source("file", file_source)
    for key, (value, variable) in env_overrides(environ or {}).items():
        values[key] = value
        sources[key] = Source("env", variable)
    return EffectivePolicy(Policy(**values), sources)


def reaches_archive(policy: Policy, purpose: str) -> bool:
    """Whether a read for `purpose` ("timeline" or "retrieval") may include archived records.

    Restore always reaches the whole archive; this only governs what ordinary reads see.
    """
    if purpose not in ("timeline", "retrieval"):
        msg = f"unknown archive purpose {purpose!r}"
        raise InvalidInput(msg)
    return policy.archive_reach == "all" or (policy.archive_reach == "timeline" and purpose == "timeline")


# ---- lifecycle: time and confidence ----

def format_ts(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds, the form every record's `ts` has."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(ts: object) -> datetime | None:
    """A record timestamp as a datetime; None when it is missing or unreadable."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def age_days(ts: object, now: datetime) -> int:
    """Whole days from `ts` to `now`; 0 for a future or unreadable stamp.

    Whole days, so that a number derived from it (decayed confidence) is the same all
    day long and two reads on the same day print the same JSON. A stamp from the
    future (a skewed clock on another machine) counts as fresh rather than negative.
    """
    moment = parse_ts(ts)
    if moment is None:
        return 0
    return max(0, (now - moment).days)


def decayed_confidence(confidence: float, days: int, decay_rate: float) -> float:
    """`confidence * (1 - decay_rate) ** days`: deterministic decay by age."""
    return float(confidence) * (1.0 - decay_rate) ** max(0, days)


def is_stale(days: int, policy: Policy) -> bool:
    return days > policy.stale_days


def is_consolidation_candidate(confidence: float, days: int, policy: Policy) -> bool:
    """Stale and, after decay, below the low-confidence threshold: first to go, last to be shown."""
    return is_stale(days, policy) and decayed_confidence(confidence, days, policy.decay_rate) < \
        policy.low_confidence_threshold
