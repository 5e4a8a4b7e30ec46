"""`.failres.toml`: where it lives, what it may say, and the frozen values it becomes.

Each section is a frozen dataclass; its fields declare their TOML kind and default
(see `failres.config.schema`), and the same declarations drive the reader and the
check of `.failres.toml.example`. A section that other parts of failres need later
is one more dataclass here and one more field on `Config`.

Reading is strict: an unknown key, a wrong type or an impossible value stops
failres with one line naming the file and the key, because a setting that is
silently ignored is worse than one that is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType

from lessons.frozen import record
from failres.config.kinds import (
    COMMAND,
    OPTIONAL_COMMAND,
    OPTIONAL_SEAT_COMMAND,
    SEAT_COMMAND,
    Duration,
    Flag,
    Integer,
    IntegerList,
    Network,
    RegexList,
    Text,
    TextList,
    TextTable,
    regex_problem,
    seat_placeholder_problem,
    placeholder_problem,
)
from failres.config.schema import (
    NamedSections,
    Section,
    SectionList,
    setting,
)
from failres.config.checks import (
    branch_name_problem,
    ref_name_problem,
    remote_problem,
    store_ref_problem,
    task_branches_problem,
    workspace_dir_problem,
)
from failres.config.knowledge import LearningConfig, PolicyConfig, PolicySection
from failres.errors import ConfigError
from failres.config.placeholders import PLACEHOLDERS, render_command
from failres.gitops.location import RepoPaths, find_repo_top, locate_repo

__all__ = [
    "BUILT_IN_FAILURE_CLASSES", "CONFIG_FILE", "DEFAULT_ENGINE_DOWN_PATTERNS", "PLACEHOLDERS",
    "BindingConfig", "Config", "EngineDownConfig", "GateConfig", "IntegrationConfig", "LearningConfig",
    "OutputConfig",
    "PolicyConfig", "ProbeConfig", "RepairConfig", "RepoPaths", "ScopeConfig", "SeatsConfig", "StopLossConfig",
    "RemoteConfig", "StoreConfig", "SyncConfig", "TaxonomyConfig", "TaxonomyRule", "WorkspaceConfig",
    "WorktreesConfig",
    "branch_name_problem", "find_repo_top", "locate_repo", "ref_name_problem", "render_command",
    "workspace_dir_problem",
]

CONFIG_FILE = ".failres.toml"

# The classes failres itself assigns. A user rule may add classes but never reuse one of
# these names: a lesson's class must mean the same thing in every repository.
BUILT_IN_FAILURE_CLASSES: tuple[str, ...] = (
    "fixer-scope-violation",
    "gate-not-green-after-fixer",
    "wrapper-engine-down",
    "repeated-failure-stop",
    "seat-timeout",
    "gate-timeout",
    "seat-crashed",
    "patch-does-not-apply",
    "seat-tamper",
    "seat-denied",
    "gate-unavailable",
    "workspace-unrestorable",
    "publish-refused",
    "include-refused",
    "unknown",
)

DEFAULT_ENGINE_DOWN_PATTERNS: tuple[str, ...] = (
    r"connection refused",
    r"ECONNREFUSED",
    r"ECONNRESET",
    r"\b(429|502|503|529)\b",
    r"overloaded",
    r"rate.?limit",
    r"service unavailable",
    r"could not resolve host",
    r"network is unreachable",
    r"timed out connecting",
)

DEFAULT_ARTIFACTS: tuple[str, ...] = (
    ".aider*",
    "__pycache__/",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".coverage.*",
    ".DS_Store",
)

_NAME_PATTERN = r"[A-Za-z0-9_.-]*"
_BINDING_NAME_MEANING = 'a binding name (letters, digits, "_", "." and "-")'
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


# ---- checks on single values (the ones that guard the repository are in config_checks) ----

def _failure_class_problem(name: str) -> str | None:
    if name in BUILT_IN_FAILURE_CLASSES:
        return f'"{name}" is a built-in failure class; a rule must name a class of its own'
    return None


# ---- the sections ----


@record
class IntegrationConfig:
    """The branch tasks start from and land into."""

    branch: str = setting("main", kind=Text(non_empty=True, check=branch_name_problem))
    remote: str = setting("", kind=Text(check=remote_problem))


@record
class StoreConfig:
    """Where every record lives."""

    ref: str = setting("refs/failres/store", kind=Text(check=store_ref_problem))


@record
class WorktreesConfig:
    """Where task workspaces are made, and whether finished ones stay."""

    dir: str = setting("", kind=Text())
    keep: bool = setting(False, kind=Flag())


@record
class SyncConfig:
    """What `git failres sync` exchanges besides the store."""

    # Snapshot commits hold a failing worktree as the seat left it, files it wrote
    # included; they reach a remote only where a person asked for that.
    snapshots: bool = setting(False, kind=Flag())


@record
class RemoteConfig:
    """How runners of one plan on many machines share it (`run --remote`)."""

    # A claim not renewed within this long is another runner's to take: short enough that a
    # dead runner's task is not lost for long, long enough that a slow push never loses a live one.
    lease: float = setting(120.0, kind=Duration())
    # Where task branches are pushed (`<branches>/<slug>/<task>`): under refs/heads they land in
    # every person's `git fetch`, ten thousand of them for a large plan; "refs/failres/tasks" keeps
    # them out of it. This clone's own task branches stay `refs/heads/failres/<slug>/<task>`.
    branches: str = setting("refs/heads/failres", kind=Text(check=task_branches_problem))


@record
class GateConfig:
    """A judge command: exit 0 means green."""

    name: str
    command: tuple[str, ...] = setting(kind=COMMAND)
    cwd: str = setting("repo", kind=Text(choices=("repo", "worktree")))
    timeout: float = setting(15 * 60.0, kind=Duration())
    # Run once in a new workspace, before its first seat: what the gate needs that is
    # not tracked (dependencies). Its output must sit under `keep` to survive.
    setup: tuple[str, ...] = setting((), kind=OPTIONAL_COMMAND)
    # .gitignore-style patterns of untracked paths that stay in the workspace when it is
    # put back to the task's tree before each seat and each gate (e.g. node_modules/).
    keep: tuple[str, ...] = setting((), kind=TextList())
    # Run the gate once at the integration head before a task's first dispatch: a gate
    # that cannot run there quarantines the task (gate-unavailable) with no seat paid.
    preflight: bool = setting(True, kind=Flag())
    # Variables the gate (and its setup) runs with, e.g. { PYTHONPATH = "src" }.
    env: Mapping[str, str] = setting(
        kind=TextTable(key_pattern=_ENV_NAME, key_meaning="a valid environment variable name",
                       check=placeholder_problem),
        factory=lambda: MappingProxyType({}),
    )
    # Inside the seat world; "" (the default): the gate "off", its setup "open" (it installs
    # dependencies), unless [sandbox] network says otherwise; set here, it is the gate's and
    # its setup's: "off", "open", or the hosts (registries) they may reach.
    network: str | tuple[str, ...] = setting("", kind=Network())


@record
class BindingConfig:
    """An agent or tool a seat can be bound to."""

    name: str
    command: tuple[str, ...] = setting(kind=SEAT_COMMAND)
    health: tuple[str, ...] = setting((), kind=OPTIONAL_SEAT_COMMAND)  # () = no probe command
    timeout: float = setting(30 * 60.0, kind=Duration())
    env: Mapping[str, str] = setting(
        kind=TextTable(key_pattern=_ENV_NAME, key_meaning="a valid environment variable name",
                       check=seat_placeholder_problem),
        factory=lambda: MappingProxyType({}),
    )
    # Inside the seat world: host paths this agent may read (its login, a toolchain), and
    # its own network setting ("" follows [sandbox] network).
    read: tuple[str, ...] = setting((), kind=TextList())
    # Host paths it may write, at their own place (a cache it keeps between dispatches).
    write: tuple[str, ...] = setting((), kind=TextList())
    # "" (the default): the agent's API hosts where failres knows the agent, else "open",
    # unless [sandbox] network says otherwise; "off", "open", or a list of hosts.
    network: str | tuple[str, ...] = setting("", kind=Network())


@record
class SandboxConfig:
    """The seat world: where seats, workspace gates and setups run (`failres.sandbox`)."""

    # "auto": wherever this machine gives one; "required": refuse to dispatch without
    # one; "off": run as plain processes, with the tamper check as the only wall.
    mode: str = setting("auto", kind=Text(choices=("auto", "required", "off")))
    # "on": each command its own default (`failres.sandbox.network`); "off", "open" or a
    # list of hosts: that, for every binding and gate that does not say its own.
    network: str | tuple[str, ...] = setting("on", kind=Network())
    read: tuple[str, ...] = setting((), kind=TextList())


@record
class WorkspaceConfig:
    """What of the person's checkout, beyond the task's tree, a workspace carries or sees."""

    # Untracked environment dirs at the top of the checkout, visible read-only inside the
    # world at their usual place; None: the usual ones (.venv/, venv/, node_modules/,
    # .tox/, .nox/) where present. [] shows none (a setup makes the workspace's own).
    environment: tuple[str, ...] | None = setting(None, kind=TextList())
    # Untracked files of the person's checkout (globs from the top, e.g. ".env") copied into
    # every workspace before each seat and gate: never committed, never a violation.
    include: tuple[str, ...] = setting((), kind=TextList())


@record
class SeatsConfig:
    """Which binding sits in each seat; "" leaves the seat empty."""

    implementer: str = setting("", kind=Text(pattern=_NAME_PATTERN, pattern_meaning=_BINDING_NAME_MEANING))
    fixer: str = setting("", kind=Text(pattern=_NAME_PATTERN, pattern_meaning=_BINDING_NAME_MEANING))
    resolver: str = setting("", kind=Text(pattern=_NAME_PATTERN, pattern_meaning=_BINDING_NAME_MEANING))
    # false: the resolver's reply is a proposal a person accepts; true: it is the answer.
    resolver_may_answer: bool = setting(False, kind=Flag())


@record
class RepairConfig:
    """The fixer's budget after a red gate."""

    enabled: bool = setting(True, kind=Flag())
    max_attempts: int = setting(1, kind=Integer(minimum=0, maximum=20))
    rollback: bool = setting(True, kind=Flag())


@record
class ScopeConfig:
    """Paths no seat may touch and no decision may widen into."""

    protected: tuple[str, ...] = setting((), kind=TextList())
    # .gitignore-style patterns of what agents and tools leave behind: removed before the
    # scope check, never committed, never a violation.
    artifacts: tuple[str, ...] = setting(DEFAULT_ARTIFACTS, kind=TextList())


@record
class StopLossConfig:
    """When identical quarantines on an unchanged integration head stop retries."""

    mode: str = setting("on", kind=Text(choices=("on", "off")))
    threshold: int = setting(2, kind=Integer(minimum=1))


@record
class ProbeConfig:
    """How an engine that looked down is probed before a retry."""

    attempts: int = setting(2, kind=Integer(minimum=1, maximum=10))
    backoff: float = setting(30.0, kind=Duration())


@record
class EngineDownConfig:
    """How a seat failure is recognised as an unreachable engine."""

    patterns: tuple[str, ...] = setting(DEFAULT_ENGINE_DOWN_PATTERNS, kind=RegexList(flags=re.IGNORECASE))
    exit_codes: tuple[int, ...] = setting((126, 127), kind=IntegerList(minimum=1, maximum=255))

    def compiled_patterns(self) -> tuple[re.Pattern[str], ...]:
        """The patterns as matched: case-insensitive, since engines vary their wording."""
        return tuple(re.compile(pattern, re.IGNORECASE) for pattern in self.patterns)


@record
class OutputConfig:
    """How much of a seat's or gate's output is kept, from each end."""

    head_bytes: int = setting(65536, kind=Integer(minimum=1024, maximum=64 * 1024 * 1024))
    tail_bytes: int = setting(65536, kind=Integer(minimum=1024, maximum=64 * 1024 * 1024))


@record
class TaxonomyRule:
    """A user's failure class, checked before the built-in rules."""

    fail_class: str = setting(kind=Text(pattern=r"[a-z0-9-]+", pattern_meaning='a valid class name (a-z, 0-9 and "-")',
                                         check=_failure_class_problem), key="class")
    match: str = setting(kind=Text(non_empty=True, check=lambda p: regex_problem(p, re.IGNORECASE)))
    on: str = setting("any", kind=Text(choices=("seat", "gate", "any")))
    # Only actions that keep a gate as strict as it is: a rule can never make red green.
    action: str = setting("quarantine", kind=Text(choices=("retry-fixer", "quarantine", "escalate")))

    def compiled(self) -> re.Pattern[str]:
        """The rule's pattern as matched: case-insensitive, like the engine-down patterns."""
        return re.compile(self.match, re.IGNORECASE)


@record
class TaxonomyConfig:
    """Extensions of the failure taxonomy."""

    rules: tuple[TaxonomyRule, ...] = setting((), kind=SectionList(TaxonomyRule))


def _empty_mapping() -> Mapping:
    return MappingProxyType({})


@record
class Config:
    """Everything `.failres.toml` says, defaults filled in."""

    integration: IntegrationConfig = setting(kind=Section(IntegrationConfig), factory=IntegrationConfig)
    store: StoreConfig = setting(kind=Section(StoreConfig), factory=StoreConfig)
    worktrees: WorktreesConfig = setting(kind=Section(WorktreesConfig), factory=WorktreesConfig)
    gates: Mapping[str, GateConfig] = setting(kind=NamedSections(GateConfig, "gate"), factory=_empty_mapping)
    bindings: Mapping[str, BindingConfig] = setting(
        kind=NamedSections(BindingConfig, "binding"), factory=_empty_mapping)
    seats: SeatsConfig = setting(kind=Section(SeatsConfig), factory=SeatsConfig)
    repair: RepairConfig = setting(kind=Section(RepairConfig), factory=RepairConfig)
    scope: ScopeConfig = setting(kind=Section(ScopeConfig), factory=ScopeConfig)
    stop_loss: StopLossConfig = setting(kind=Section(StopLossConfig), factory=StopLossConfig)
    probe: ProbeConfig = setting(kind=Section(ProbeConfig), factory=ProbeConfig)
    engine_down: EngineDownConfig = setting(kind=Section(EngineDownConfig), factory=EngineDownConfig)
    output: OutputConfig = setting(kind=Section(OutputConfig), factory=OutputConfig)
    taxonomy: TaxonomyConfig = setting(kind=Section(TaxonomyConfig), factory=TaxonomyConfig)
    policy: PolicyConfig = setting(kind=PolicySection(PolicyConfig), factory=PolicyConfig)
    learning: LearningConfig = setting(kind=Section(LearningConfig), factory=LearningConfig)
    sync: SyncConfig = setting(kind=Section(SyncConfig), factory=SyncConfig)
    remote: RemoteConfig = setting(kind=Section(RemoteConfig), factory=RemoteConfig)
    sandbox: SandboxConfig = setting(kind=Section(SandboxConfig), factory=SandboxConfig)
    workspace: WorkspaceConfig = setting(kind=Section(WorkspaceConfig), factory=WorkspaceConfig)
    # Not a key: the file these values came from, so later errors can name it.
    source: str = field(default=CONFIG_FILE, compare=False)

    def default_gate(self) -> GateConfig | None:
        """The gate a task uses when it names none: the first in file order."""
        return next(iter(self.gates.values()), None)

    def gate(self, name: str) -> GateConfig:
        """The gate called `name`; ConfigError with the known names otherwise."""
        if name not in self.gates:
            raise self._undefined("gate", name, "gates")
        return self.gates[name]

    def binding(self, name: str) -> BindingConfig:
        """The binding called `name`; ConfigError with the known names otherwise."""
        if name not in self.bindings:
            raise self._undefined("binding", name, "bindings")
        return self.bindings[name]

    def seat_binding(self, seat: str) -> BindingConfig | None:
        """The binding in `seat` (implementer, fixer, resolver), or None when the seat is empty."""
        name = getattr(self.seats, seat)
        return self.binding(name) if name else None

    def _undefined(self, noun: str, name: str, section: str) -> ConfigError:
        known = list(getattr(self, section))
        msg = f'{self.source}: no {noun} named "{name}" is defined in [{section}]'
        return ConfigError(msg, hint=known_names_hint(name, known, section))


def known_names_hint(name: str, known: list[str], section: str) -> str:
    import difflib  # only for a name that was misspelt

    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f'did you mean "{close[0]}"?'
    if known:
        return f"defined in [{section}]: " + ", ".join(known)
    return f"define it as [{section}.{name}] in {CONFIG_FILE}"
