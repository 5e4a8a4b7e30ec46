"""Reading `.failres.toml` into a `Config`, where task workspaces go, and the policy in force.

Strict: an unknown key, a wrong type or an impossible value stops failres with one
line naming the file and the key (`ConfigError`), and nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from failres.config.checks import resolve_workspace_dir, workspace_dir_problem
from failres.config.model import CONFIG_FILE, Config, known_names_hint
from failres.config.schema import Invalid, config_error, parse_toml, read_table, read_text_file
from failres.errors import ConfigError
from failres.gitops.location import RepoPaths
from lessons.bounds.policy import POLICY_KEYS, EffectivePolicy, PolicyProblem, effective_policy

# ---- reading ----

def _check_seats(config: Config) -> None:
    """Every non-empty seat must name a defined binding."""
    for seat in ("implementer", "fixer", "resolver"):
        name = getattr(config.seats, seat)
        if name and name not in config.bindings:
            problem = f'names binding "{name}" which is not defined in [bindings]'
            hint = known_names_hint(name, list(config.bindings), "bindings")
            raise Invalid(("seats", seat), problem, hint=hint)


def parse_config(text: str, source: str) -> Config:
    """The configuration in `text`; ConfigError naming `source` and the key on any problem."""
    raw = parse_toml(text, source)
    try:
        config = read_table(Config, raw, (), source=source)
        _check_seats(config)
    except Invalid as invalid:
        raise config_error(source, invalid) from None
    return config


def load_config(top: Path) -> Config:
    """The configuration at `top/.failres.toml`; the defaults when there is no such file.

    Also checked against the repository at `top`: where `worktrees.dir` points. The
    environment may tighten it (`FAILRES_SANDBOX_MODE`, see `tightened_by_environment`).
    """
    path = top / CONFIG_FILE
    if not path.exists() and not path.is_symlink():  # a dangling link or a loop is no absence
        return tightened_by_environment(Config(source=str(path)), os.environ)
    config = parse_config(read_text_file(path, str(path)), str(path))
    if config.worktrees.dir:
        problem = _workspace_problem(config.worktrees.dir, top)
        if problem:
            raise config_error(str(path), Invalid(("worktrees", "dir"), problem))
    return tightened_by_environment(config, os.environ)


# A CI job asks for the seat world without editing the file it checked out (that would
# be a change in the person's tree): `git failres ci` sets it in the workflow. It can
# only tighten: a variable left in some environment must never switch the world off.
SANDBOX_MODE_VARIABLE = "FAILRES_SANDBOX_MODE"


def tightened_by_environment(config: Config, environ: Mapping[str, str]) -> Config:
    """`config` with `[sandbox] mode = "required"` when `FAILRES_SANDBOX_MODE=required`;
    ConfigError (exit 2) for any other value, so a typo cannot pass for the world."""
    value = environ.get(SANDBOX_MODE_VARIABLE)
    if value is None or value == "":
        return config
    if value != "required":
        msg = f'environment: {SANDBOX_MODE_VARIABLE} must be "required" (it can only tighten [sandbox] mode), not {value!r}'
        raise ConfigError(msg, hint=f"unset {SANDBOX_MODE_VARIABLE}, or set [sandbox] mode in .failres.toml")
    return replace(config, sandbox=replace(config.sandbox, mode="required"))


def _workspace_problem(value: str, top: Path) -> str | None:
    import pygit2

    found = pygit2.discover_repository(str(top))
    if not found:
        return None
    git_dir = Path(os.path.realpath(found))
    return workspace_dir_problem(resolve_workspace_dir(value, top), Path(os.path.realpath(top)), git_dir)


# ---- where worktrees go ----

def worktrees_root(config: Config, repo: RepoPaths) -> Path:
    """The directory task workspaces go in: `worktrees.dir`, or the user's cache."""
    if not config.worktrees.dir:
        from failres.gitops.workspace import default_root

        return default_root(repo.common_dir, repo.top)
    chosen = resolve_workspace_dir(config.worktrees.dir, repo.top)
    problem = workspace_dir_problem(chosen, Path(os.path.realpath(repo.top)), Path(os.path.realpath(repo.common_dir)))
    if problem:
        raise config_error(config.source, Invalid(("worktrees", "dir"), problem))
    return chosen


# ---- the knowledge policy in force ----

def effective_policy_of(config: Config, environ: Mapping[str, str]) -> EffectivePolicy:
    """The policy the file sets, overlaid by `FAILRES_POLICY_*`; ConfigError naming the variable."""
    values = {key: getattr(config.policy, key) for key in config.policy.file_keys if key in POLICY_KEYS}
    try:
        return effective_policy(values, file_source=config.source, environ=environ)
    except PolicyProblem as problem:
        msg = f"environment: {problem}"
        raise ConfigError(msg, hint=problem.hint) from None
