"""`git failres init`: a starter configuration, the store ref and the merge hooks.

The hooks are what make a person's plain `git merge` of a task branch stamp its
lessons. A repository where they cannot go (core.hooksPath shared beyond it, a
foreign hook already moved aside) is still initialised: the reason is reported,
and `git failres label` covers landings the hooks miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import pygit2

from failres.agents.recipes import AGENTS, gate_command_for, recipe_toml
from failres.config import CONFIG_FILE, parse_config
from failres.config_schema import read_text_file
from failres.errors import UsageError
from failres.hooks import HooksReport, install_hooks
from lessons.store import Store


@dataclass(frozen=True)
class InitResult:
    config_path: Path
    wrote_config: bool
    store_ref: str
    store_tip: str
    hooks: HooksReport | None = None  # None: not asked for, or refused (see hooks_problem)
    hooks_problem: str | None = None


def starter_config(branch: str, agent: str | None = None, top_level_names: tuple[str, ...] = ()) -> str:
    """The configuration `init` writes: the detected integration branch, the rest commented.

    With an agent, its recipe follows (a gate guessed from the project's top-level
    files, the binding, the seats), so the first `git failres run` works as written.
    """
    template = files("failres").joinpath("data/starter.toml").read_text(encoding="utf-8")
    text = template.replace("{branch}", branch)
    if agent is None:
        return text
    heading = f"# ---- written by `git failres init --agent {agent}` ----"
    return f"{text}\n{heading}\n\n{recipe_toml(agent, gate_command_for(top_level_names))}"


def check_agent(agent: str | None) -> None:
    """UsageError for an agent without a recipe, naming the ones there are."""
    if agent is not None and agent not in AGENTS:
        msg = f'no recipe for agent "{agent}"'
        raise UsageError(msg, hint="choose one of: " + ", ".join(AGENTS))


def current_branch(repo: pygit2.Repository) -> str:
    """The branch HEAD names (also on an unborn branch), else "main"."""
    try:
        target = repo.references["HEAD"].target
    except KeyError:
        return "main"
    if isinstance(target, str) and target.startswith("refs/heads/"):
        return target[len("refs/heads/"):]
    return "main"


def init_repository(top: Path, *, force: bool = False, hooks: bool = True, agent: str | None = None,
                    new_store: bool = False) -> InitResult:
    check_agent(agent)
    path = top / CONFIG_FILE
    repo = pygit2.Repository(str(top))
    keep = path.exists() and not force
    if keep:
        # An existing file is the person's: keep it, but it must load before we build on it.
        if not path.is_file():
            msg = f"{path} exists and is not a file"
            raise UsageError(msg)
        text, source = read_text_file(path, path.name), path.name
    else:
        names = tuple(sorted(entry.name for entry in top.iterdir())) if agent else ()
        text, source = starter_config(current_branch(repo), agent, names), CONFIG_FILE
    config = parse_config(text, source)  # never write a file we could not load ourselves
    store = Store(repo, config.store.ref)
    # Before anything is written: a store that existed and is gone is the person's to
    # restore, and a configuration written beside that refusal would be half an init.
    store.check_creatable(replacing_lost=new_store)
    if not keep:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    tip = store.create(replacing_lost=new_store)
    report, problem = None, None
    if hooks:
        try:
            report = install_hooks(top)
        except UsageError as refused:
            problem = f"{refused}" + (f" ({refused.hint})" if refused.hint else "")
    return InitResult(path, not keep, config.store.ref, str(tip), report, problem)
