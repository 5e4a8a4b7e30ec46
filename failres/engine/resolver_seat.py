"""`git failres decisions propose ID`: ask the resolver seat to propose an answer to an open decision.

The binding named by `[seats] resolver` runs once, in a throw-away workspace at the
integration head (it may read the code; nothing it writes there is kept, and the
tamper check undoes anything it changes in the person's repository). Its reply
counts only when it parses to exactly `{"scopeFiles": [paths]}` and passes the same
checks as a person's answer. Even then it is a *proposal*: the resolver proposes, a
person decides (`git failres decide ID --accept-proposal`). Only with
`[seats] resolver_may_answer = true` is the reply recorded as the answer itself.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path, PurePath

import pygit2

from failres.decisions.answering import answer_decision, propose_decision, widening_problem
from failres.config.model import Config, render_command
from failres.config.loading import worktrees_root
from failres.decisions.records import COLLECTION, WAITING
from failres.processes import reaper
from failres.processes.process import ProcessResult, run_process
from failres.sandbox.world import SeatWorld
from failres.engine.state import recorded_task
from failres.journal import read_journal
from failres.engine.seats import seat_env, seat_values
from failres import beneath
from failres.containment.tamper import Guard, OwnMoves
from failres.gitops.workspace_files import fresh_dir_beside
from failres.errors import UsageError
from failres.gitops.commits import head_commit
from failres.gitops.workspace import Workspace, remove_tree
from failres.gitops.location import locate_repo
from failres.decisions.resolver_prompt import parse_scope_reply, render_resolver_prompt
from lessons.storage.records import now_ts, read_record, resolve_id
from lessons.recall.retrieval import relevant_lessons
from lessons.storage.store import Store

logger = logging.getLogger("failres.resolver")

SCOPE_CLASS = "fixer-scope-violation"


@dataclass(frozen=True)
class Proposal:
    """What the resolver proposed and what became of it."""

    decision: str
    binding: str
    accepted: bool  # the reply holds a usable answer (recorded as a proposal, or as the answer)
    answer: dict | None
    reason: str
    log: Path | None
    answered: bool = False  # recorded as the answer itself (resolver_may_answer)


def propose_answer(top: Path, repo: pygit2.Repository, config: Config, store: Store, prefix: str) -> Proposal:
    binding_name = config.seats.resolver
    if not binding_name:
        msg = "no resolver seat is configured"
        raise UsageError(msg, hint='set [seats] resolver = "<binding>" in .failres.toml, or answer with decide')
    decision_id = resolve_id(store, COLLECTION, prefix)
    decision = read_record(store, COLLECTION, decision_id) or {}
    if decision.get("status") not in WAITING:
        msg = f"decision {decision_id} is answered already"
        raise UsageError(msg, hint="`git failres decide ID --force ...` replaces an answer")
    slug, task_id = str(decision.get("slug")), str(decision.get("task"))
    task = recorded_task(read_journal(store, slug).for_task(task_id), task_id)
    task_data = {"id": task.id, "title": task.title, "prompt": task.prompt, "files": list(task.files)} if task else None
    prompt = render_resolver_prompt(decision, task_data, relevant_lessons(store, SCOPE_CLASS, 3),
                                    config.scope.protected)
    git_dir = Path(repo.path)
    result, tampered = _run_resolver(top, git_dir, config, binding_name, decision_id, slug, task_id, prompt,
                                     store.ref)
    log = _log_reply(git_dir, decision_id, binding_name, result.text)
    if tampered:
        return Proposal(decision_id, binding_name, False, None,
                        "the resolver changed things outside its workspace (undone: " + "; ".join(tampered)
                        + "); the decision stays open", log)
    if result.timed_out or result.exit_code != 0:
        # A seat that crashed or ran out of time may have printed half a thought: fail closed.
        status = "timed out" if result.timed_out else f"exited {result.exit_code}"
        return Proposal(decision_id, binding_name, False, None, f"the resolver {status}; the decision stays open", log)
    answer = parse_scope_reply(result.text)
    if answer is None:
        return Proposal(decision_id, binding_name, False, None,
                        'the reply holds no single {"scopeFiles": [paths]} answer; the decision stays open', log)
    problem = widening_problem(answer["scopeFiles"], config.scope.protected)
    if problem is not None:
        return Proposal(decision_id, binding_name, False, answer, f"{problem}; the decision stays open", log)
    if config.seats.resolver_may_answer:
        answer_decision(store, config.scope.protected, decision_id, answer, answered_by=f"resolver:{binding_name}")
        return Proposal(decision_id, binding_name, True, answer, "recorded as the answer (resolver_may_answer)",
                        log, answered=True)
    propose_decision(store, config.scope.protected, decision_id, answer, proposed_by=f"resolver:{binding_name}")
    return Proposal(decision_id, binding_name, True, answer,
                    "recorded as a proposal; `git failres decide ID --accept-proposal` makes it the answer", log)


def _run_resolver(top: Path, git_dir: Path, config: Config, binding_name: str, decision_id: str, slug: str,
                  task: str, prompt: str, store_ref: str) -> tuple[ProcessResult, list[str]]:
    """Run the resolver once in a throw-away workspace; its result, and what it tampered with (undone)."""
    binding = config.bindings[binding_name]
    base = worktrees_root(config, locate_repo(top))
    root = base / ".resolver"
    # Made and cleared without following a link an earlier seat left on the way.
    base.mkdir(parents=True, exist_ok=True)
    dispatch_dir = fresh_dir_beside(base, f".resolver/{decision_id}.dispatch")
    beneath.write_file(base, f".resolver/{decision_id}.dispatch/prompt.md", prompt.encode("utf-8"))
    prompt_file = dispatch_dir / "prompt.md"
    start = head_commit(top, config.integration.branch)
    workspace = Workspace.create(path=root / decision_id, git_dir=git_dir,
                                 state_dir=git_dir / "failres" / "workspaces" / ".resolver" / decision_id,
                                 branch=f"failres/resolver/{decision_id}", base=start)
    reaper.become_subreaper()
    guard = Guard(top, git_dir, store_ref=store_ref, own=OwnMoves())
    before = guard.capture()
    world = None
    try:
        values = seat_values({"worktree": str(workspace.path), "slug": slug, "task": task, "mode": "resolve",
                              "prompt_file": str(prompt_file), "attempt": "1", "dispatch_dir": str(dispatch_dir)})
        # The resolver is a seat like the others: in the seat world where there is one.
        world = SeatWorld.for_task(config, top=top, workspace=workspace.path, git_dir=git_dir,
                                   workspaces_root=root.parent, dispatch_root=dispatch_dir)
        if world is not None:
            values = world.inside_values(values)
        command = render_command(binding.command, values)
        env = seat_env(values, binding.env)
        if world is not None:
            command = world.wrap(command, env=env, network=binding.network, who=f"[bindings.{binding.name}]",
                                 read=binding.read,
                                 write=[str(dispatch_dir), *binding.write])
        result = run_process(command, cwd=workspace.path,
                             env=env, stdin_data=prompt.encode("utf-8"),
                             timeout=binding.timeout, head_bytes=config.output.head_bytes,
                             tail_bytes=config.output.tail_bytes)
    finally:
        if world is not None:
            world.close()
        tamper = guard.undo(before, slug=slug, task=task)
        workspace.remove()
        try:
            fresh_dir_beside(base, f".resolver/{decision_id}.dispatch")
            remove_tree(dispatch_dir)
        except beneath.Planted as error:
            tamper.what.append(f"the resolver's dispatch directory was replaced: {error}: not followed")
    return result, tamper.what


def _log_reply(git_dir: Path, decision_id: str, binding: str, reply: str) -> Path | None:
    # Through `beneath`: a seat can plant a link at this log's name, to the person's config.
    relative = PurePath("failres", "log", "resolver.log")
    entry = f"--- {now_ts()} decision={decision_id} binding={binding} pid={os.getpid()}\n{reply}\n"
    try:
        beneath.append_file(git_dir, relative, entry.encode("utf-8", "replace"))
    except OSError as error:
        if isinstance(error, beneath.Planted):
            logger.warning("failres: the resolver's reply was not logged: %s", error)
        return None
    return git_dir / relative
