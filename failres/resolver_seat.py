"""`git failres decisions propose ID`: ask the resolver seat for an answer to an open decision.

The binding named by `[seats] resolver` runs once, in a throw-away detached
worktree at the integration head (it may read the code; nothing it writes
reaches the person's checkout or any branch). Its reply is recorded as an answer
by `resolver:<binding>` only when it parses to exactly `{"scopeFiles": [paths]}`
and passes the same checks as a person's answer; otherwise the decision stays
open and the reply is kept in the log for a person to read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from failres.answering import answer_decision, widening_problem
from failres.config import Config, render_command
from failres.decisions import COLLECTION
from failres.engine.process import ProcessResult, run_process
from failres.engine.run import task_from_journal
from failres.engine.seats import seat_env
from failres.errors import UsageError
from failres.gitops import head_commit
from failres.gitops.git import run_git, try_git
from failres.resolver_reply import parse_scope_reply, render_resolver_prompt
from lessons.records import now_ts, read_record, resolve_id
from lessons.retrieval import relevant_lessons
from lessons.store import Store

SCOPE_CLASS = "fixer-scope-violation"


@dataclass(frozen=True)
class Proposal:
    """What the resolver proposed and what became of it."""

    decision: str
    binding: str
    accepted: bool
    answer: dict | None
    reason: str
    log: Path | None


def propose_answer(top: Path, repo: pygit2.Repository, config: Config, store: Store, prefix: str) -> Proposal:
    binding_name = config.seats.resolver
    if not binding_name:
        msg = "no resolver seat is configured"
        raise UsageError(msg, hint='set [seats] resolver = "<binding>" in .failres.toml, or answer with decide')
    decision_id = resolve_id(store, COLLECTION, prefix)
    decision = read_record(store, COLLECTION, decision_id) or {}
    if decision.get("status") != "open":
        msg = f"decision {decision_id} is answered already"
        raise UsageError(msg, hint="`git failres decide ID --force ...` replaces an answer")
    slug, task_id = str(decision.get("slug")), str(decision.get("task"))
    task = task_from_journal(store, slug, task_id)
    task_data = {"id": task.id, "title": task.title, "prompt": task.prompt, "files": list(task.files)} if task else None
    prompt = render_resolver_prompt(decision, task_data, relevant_lessons(store, SCOPE_CLASS, 3),
                                    config.scope.protected)
    git_dir = Path(repo.path)
    result = _run_resolver(top, git_dir, config, binding_name, decision_id, slug, task_id, prompt)
    log = _log_reply(git_dir, decision_id, binding_name, result.text)
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
    answer_decision(store, config.scope.protected, decision_id, answer, answered_by=f"resolver:{binding_name}")
    return Proposal(decision_id, binding_name, True, answer, "recorded", log)


def _run_resolver(top: Path, git_dir: Path, config: Config, binding_name: str, decision_id: str, slug: str,
                  task: str, prompt: str) -> ProcessResult:
    binding = config.bindings[binding_name]
    base = git_dir / "failres" / "resolver"
    worktree = base / decision_id
    prompt_file = base / f"{decision_id}.md"
    base.mkdir(parents=True, exist_ok=True)
    prompt_file.write_text(prompt, encoding="utf-8")
    try_git(top, ["worktree", "remove", "--force", "--force", str(worktree)])
    run_git(top, ["worktree", "prune"])
    run_git(top, ["worktree", "add", "--detach", str(worktree), head_commit(top, config.integration.branch)])
    try:
        values = {"worktree": str(worktree), "repo": str(top), "slug": slug, "task": task, "mode": "resolve",
                  "prompt_file": str(prompt_file), "attempt": "1"}
        result = run_process(render_command(binding.command, values), cwd=worktree,
                             env=seat_env(values, binding.env), stdin_data=prompt.encode("utf-8"),
                             timeout=binding.timeout, head_bytes=config.output.head_bytes,
                             tail_bytes=config.output.tail_bytes)
    finally:
        try_git(top, ["worktree", "remove", "--force", "--force", str(worktree)])
        try_git(top, ["worktree", "prune"])
    return result


def _log_reply(git_dir: Path, decision_id: str, binding: str, reply: str) -> Path | None:
    try:
        directory = git_dir / "failres" / "log"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "resolver.log"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"--- {now_ts()} decision={decision_id} binding={binding} pid={os.getpid()}\n{reply}\n")
        return path
    except OSError:
        return None
