"""`git failres init`: a starter configuration, the store ref and the merge hooks.

The hooks are what make a person's plain `git merge` of a task branch stamp its
lessons. A repository where they cannot go (core.hooksPath shared beyond it, a
foreign hook already moved aside) is still initialised: the reason is reported,
and `git failres label` covers landings the hooks miss.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import pygit2

from failres.agents.recipes import AGENTS, gate_toml, recipe_toml
from failres.config.model import CONFIG_FILE
from failres.config.loading import parse_config
from failres.config.schema import read_text_file
from failres.errors import UsageError
from failres.hooks.install import HooksReport, install_hooks
from failres.remote.store_origin import store_to_take, take_store
from lessons.storage.store import Store


@dataclass(frozen=True)
class InitResult:
    config_path: Path
    wrote_config: bool
    store_ref: str
    store_tip: str
    hooks: HooksReport | None = None  # None: not asked for, or refused (see hooks_problem)
    hooks_problem: str | None = None
    store_from: str | None = None  # the remote whose store was taken (see `failres.remote.store_origin`)
    integration_branch: str = "main"
    other_branches: tuple[str, ...] = ()  # main or master, when the branch chosen is neither
    session_hooks: str | None = None  # the agent settings file holding the session hook (`--session-hooks`)
    session_hooks_changed: bool = False
    gate_note: str = ""  # why the gate written is not the one guessed, or is a placeholder ("" when it runs)
    gate_placeholder: bool = False
    gate_guessed: bool = False  # a gate guessed from the project was written (not --full, not a kept file)


def integration_note(result: InitResult) -> list[str]:
    """Which integration branch `init` chose and how to change it (pure): a feature branch
    checked out at init would otherwise silently become where every task lands."""
    branch = result.integration_branch
    chosen = "the branch checked out now" if result.wrote_config else f"from {result.config_path.name}"
    lines = [f'integration branch: {branch} ({chosen}); tasks start from it and land into it; '
             f'change it with [integration] branch = "NAME" in {result.config_path.name}']
    for other in result.other_branches:
        lines.append(f'note: {other} exists too; if tasks should land there, set [integration] branch = "{other}"')
    return lines


def starter_config(branch: str, agent: str | None = None, top_level_names: tuple[str, ...] = (),
                   top: Path | None = None, learn_with_agent: bool = False, gate=None) -> str:
    """The configuration `init` writes: the detected integration branch, a gate guessed from the
    project's files and checked to run here (`project_gate`), the rest commented.

    With an agent, its recipe carries that gate, the binding and the seats, so the first
    `git failres run` works as written; a gate nothing could be found for is marked as a
    placeholder. With `learn_with_agent`, the agent's print mode as learning's model too.
    Without `top` (nor a gate), the bare starter.
    """
    template = files("failres").joinpath("data/starter.toml").read_text(encoding="utf-8")
    text = template.replace("{branch}", branch)
    if agent is None and gate is None and top is None:
        return text
    chosen = gate if gate is not None else project_gate(top, top_level_names)
    comment = f"PLACEHOLDER: {chosen.note}" if chosen.placeholder else chosen.note
    if agent is None:
        # No agent named yet, but the judge is the project's all the same: the gate `init --agent`
        # would write, checked the same way, so `run --dry-run --preflight` shows it judging before
        # any binding exists (a commented example left the first preflight with nothing to run).
        if _STARTER_GATE not in text:
            msg = "the packaged starter configuration has no example gate"
            raise RuntimeError(msg)
        text = text.replace(_STARTER_GATE, gate_toml(chosen.guess.command, chosen.guess.env, comment), 1)
    else:
        heading = f"# ---- written by `git failres init --agent {agent}` ----"
        text = f"{text}\n{heading}\n\n{recipe_toml(agent, chosen.guess.command, chosen.guess.env, comment)}"
    generated = _untracked_version_files(top)
    if generated:
        listed = ", ".join(f'"{path}"' for path in generated)
        text += (f"\n[workspace]\n# written by the build (hatch-vcs, setuptools-scm) and not tracked: a workspace made "
                 f"from the commit lacks it\ninclude = [{listed}]\n")
    if learn_with_agent:
        from failres.agents.learning_recipes import learning_toml

        text += "\n" + learning_toml(agent)
    return text


# The example gate of data/starter.toml, which plain `init` replaces with the project's own.
_STARTER_GATE = """# The judge: a plan task names its gate; the default is the first one.
# [gates.tests]
# command = ["python", "-m", "pytest", "-q"]
# cwd = "worktree"             # "repo" (repository top) or "worktree"
# timeout = "15m"
"""


def _untracked_version_files(top: Path | None) -> tuple[str, ...]:
    """The version files the build backend declares that the checkout has and git does not track."""
    from failres.agents.gate_guess import declared_version_files

    if top is None or not (top / "pyproject.toml").is_file():
        return ()
    declared = declared_version_files((top / "pyproject.toml").read_text(encoding="utf-8", errors="replace"))
    try:
        index = pygit2.Repository(str(top)).index
    except (pygit2.GitError, ValueError):
        return ()
    return tuple(path for path in declared if (top / path).is_file() and path not in index)


def project_gate(top: Path | None, names: tuple[str, ...]):
    """The gate guessed from the project at `top` (`agents.gate_guess`), checked to run here (a
    `GateChoice`): its program found by the rule `run` uses, its interpreter holding pytest."""
    from failres.agents.gate_here import ProjectLook

    return ProjectLook.of(top, names).guessed_gate(in_world=_judged_in_a_world())


def _judged_in_a_world() -> bool:
    """Whether runs here will judge in the seat world (the mode `init` writes is "auto")."""
    from failres.sandbox.probe import machine_sandbox

    return machine_sandbox().available


def check_agent(agent: str | None) -> None:
    """UsageError for an agent without a recipe, naming the ones there are."""
    if agent is not None and agent not in AGENTS:
        msg = f'no recipe for agent "{agent}"'
        raise UsageError(msg, hint="choose one of: " + ", ".join(AGENTS))


_EXAMPLE_BRANCH = '# branch = "main"'


def full_config(branch: str) -> str:
    """`init --full`: the example that documents every key, with the detected branch set.

    The example ships inside the package (failres/data), so an installed failres can write
    it; a repository never depends on a file of failres's own source tree.
    """
    example = files("failres").joinpath("data/failres.toml.example").read_text(encoding="utf-8")
    if _EXAMPLE_BRANCH not in example:
        msg = "the packaged example has no integration branch line"
        raise RuntimeError(msg)
    return example.replace(_EXAMPLE_BRANCH, f'branch = "{branch}"', 1)


def next_steps(config_name: str, agent: str | None = None, plan_hint: str = "plan.toml",
               gate_written: bool = False) -> tuple[str, ...]:
    """What a person does after `init`, in order (the first differs when a recipe, or only a gate, was written)."""
    if agent:
        first = (f"check the gate and the {agent} binding init wrote in {config_name} (the gate is a guess from "
                 "your project's files): git failres config show")
    elif gate_written:
        first = (f"name your agent in {config_name}: a [bindings.NAME] with its command and [seats] implementer = "
                 '"NAME" (git failres init --force --agent claude|codex|aider writes one that runs), and check '
                 "the gate init guessed from your project's files, [gates.tests]")
    else:
        first = (f"name your agent and your judge in {config_name}: a [bindings.NAME] with its command, "
                 '[seats] implementer = "NAME", and a [gates.NAME] whose exit 0 means green')
    return (
        first,
        f"write a plan ({plan_hint}: a slug and [[tasks]] with id, prompt and files), then check it: "
        f"git failres run {plan_hint} --dry-run",
        f"run it: git failres run {plan_hint}; then git failres status, and git failres land SLUG TASK",
    )


def preflight_offer(plan_hint: str = "plan.toml") -> str:
    """The line `init` ends with: the one command that shows whether the gate runs, before any seat is paid."""
    return (f"before the first run, see the gate judge the integration head (nothing is dispatched): "
            f"git failres run {plan_hint} --dry-run --preflight")


def current_branch(repo: pygit2.Repository) -> str:
    """The branch HEAD names (also on an unborn branch), else "main"."""
    try:
        target = repo.references["HEAD"].target
    except KeyError:
        return "main"
    if isinstance(target, str) and target.startswith("refs/heads/"):
        return target[len("refs/heads/"):]
    return "main"


# What each agent's CLI offers for hearing a session end, when it is not Claude Code's hook.
_NO_SESSION_HOOK = {
    "codex": "Codex's notify program gets each turn, not its rollout file; reflect reads ~/.codex/sessions "
             'when [learning] transcripts names it (transcripts = ["~/.codex/sessions"])',
    "aider": "aider has no session hook; reflect reads its .aider.chat.history.md when [learning] transcripts "
             'names it (transcripts = [".aider.chat.history.md"])',
}


def check_learn_with_agent(agent: str | None) -> None:
    """UsageError unless `--learn-with-agent` goes with an agent that has a print mode to learn with."""
    from failres.agents.learning_recipes import LEARNING_COMMANDS

    if agent in LEARNING_COMMANDS:
        return
    msg = "--learn-with-agent needs --agent " + "|".join(LEARNING_COMMANDS)
    raise UsageError(msg, hint='or set [learning] provider = "command" and its command in .failres.toml')


def check_session_hooks(agent: str | None) -> None:
    """UsageError unless `--session-hooks` goes with an agent whose session end failres can hear."""
    if agent == "claude":
        return
    if agent in _NO_SESSION_HOOK:
        msg = f"--session-hooks: {agent} has no session-end hook failres can install"
        raise UsageError(msg, hint=_NO_SESSION_HOOK[agent])
    msg = "--session-hooks needs --agent claude"
    raise UsageError(msg, hint="Claude Code's SessionEnd hook is the one failres installs "
                               "(in .claude/settings.local.json)")


def init_repository(top: Path, *, force: bool = False, hooks: bool = True, agent: str | None = None,
                    new_store: bool = False, full: bool = False, session_hooks: bool = False,
                    learn_with_agent: bool = False) -> InitResult:
    check_agent(agent)
    if learn_with_agent:
        check_learn_with_agent(agent)
    settings_plan = None
    if session_hooks:
        from failres.agents.claude_settings import plan_session_hooks

        check_session_hooks(agent)
        settings_plan = plan_session_hooks(top)  # a file it cannot merge into refuses the whole init
    if full and agent:
        # The documented example leaves every seat empty; a recipe fills them. One file cannot
        # be both, and silently dropping either would surprise.
        msg = "--full and --agent write different configurations"
        raise UsageError(msg, hint="init --agent NAME writes one that runs; git failres config show then "
                                   "prints every setting in force")
    path = top / CONFIG_FILE
    repo = pygit2.Repository(str(top))
    gate = None  # the gate written and what init found of it, when it writes a recipe
    keep = path.exists() and not force
    if keep:
        # An existing file is the person's: keep it, but it must load before we build on it.
        if not path.is_file():
            msg = f"{path} exists and is not a file"
            raise UsageError(msg)
        text, source = read_text_file(path, path.name), path.name
    else:
        names = tuple(sorted(entry.name for entry in top.iterdir())) if not full else ()
        branch = current_branch(repo)
        gate = project_gate(top, names) if not full else None
        text = full_config(branch) if full else starter_config(branch, agent, names, top, learn_with_agent, gate)
        source = CONFIG_FILE
    config = parse_config(text, source)  # never write a file we could not load ourselves
    store = Store(repo, config.store.ref)
    # Before anything is written: a store that existed and is gone is the person's to
    # restore, and a configuration written beside that refusal would be half an init.
    # A remote that holds the store (a clone of a team's repository) gives it instead.
    taking = None if new_store else store_to_take(store, config.integration.remote or None)
    if taking is None:
        store.check_creatable(replacing_lost=new_store)
    if not keep:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    if taking is not None:
        tip = take_store(top, store, taking)
    else:
        tip = store.create(replacing_lost=new_store)
    report, problem = None, None
    if hooks:
        try:
            report = install_hooks(top)
        except UsageError as refused:
            problem = f"{refused}" + (f" ({refused.hint})" if refused.hint else "")
    changed = False
    if settings_plan is not None:
        from failres.agents.claude_settings import write_session_hooks

        changed = write_session_hooks(top, settings_plan)
    chosen = config.integration.branch
    others = tuple(name for name in ("main", "master")
                   if name != chosen and chosen not in ("main", "master") and f"refs/heads/{name}" in repo.references)
    return InitResult(path, not keep, config.store.ref, str(tip), report, problem,
                      taking.remote if taking is not None else None, chosen, others,
                      settings_plan.shown if settings_plan is not None else None, changed,
                      gate.note if gate is not None else "", bool(gate is not None and gate.placeholder),
                      gate is not None)


def learning_note(agent: str | None, learning_written: bool) -> str:
    """One line on learning's model after `init --agent` (pure): what it costs when the
    agent's print mode was written as the provider, how to opt in when it was not."""
    from failres.agents.learning_recipes import COST_NOTE, LEARNING_COMMANDS, learning_command

    if agent not in LEARNING_COMMANDS:
        return ""
    if learning_written:
        return "learning: " + COST_NOTE.format(agent=agent) + " ([learning] in .failres.toml)"
    command = ", ".join(json.dumps(word) for word in learning_command(agent))
    return (f"learning: reflect and learn use no model; to let them ask {agent} (a paid call per reflection and "
            f'per learn pass), set [learning] provider = "command" and command = [{command}]')
