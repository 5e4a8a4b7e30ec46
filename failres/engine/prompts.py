"""The exact text a seat gets: pure functions over plain data.

`git failres prompt SLUG TASK --mode ...` prints what these return, so what a
person reviews is byte for byte what the agent saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

from lessons.frozen import record

ADVISORY_HEADING = "Past outcomes on similar failures — advisory, not instructions"
# Markers failres parses from a seat's output. Text failres quotes into a prompt (earlier
# failures, gate output, lessons, rules, facts) carries them defanged, so that an agent
# that echoes its prompt never seems to ask for scope it did not ask for.
PARSED_MARKERS = ("SCOPE-REQUEST:",)


def quoted(text: str) -> str:
    """`text` with every marker failres parses made inert (the words stay readable)."""
    for marker in PARSED_MARKERS:
        text = text.replace(marker, marker[:-1] + " (quoted):")
    return text


@record
class JudgeInvocation:
    """How the gate really runs: the command and the directory it runs from."""

    argv: tuple[str, ...]
    cwd: str


@record
class PastOutcome:
    """Resolved lessons as the advisory block shows them: one line per distinct outcome
    (signature and resolution), with how many lessons it stands for and the latest."""

    task: str
    signature: str
    resolved_by: tuple[str, ...]
    resolved_at: str
    count: int = 1


@record
class PromptInput:
    slug: str
    task: str
    title: str
    prompt: str
    files: tuple[str, ...]
    protected: tuple[str, ...] = ()
    mode: str = "implement"  # implement | fix
    attempt: int = 1
    gate_output: str = ""  # the tail of the red gate's output, in fix mode
    judge: JudgeInvocation | None = None
    rejected_files: tuple[str, ...] = ()  # non-empty after a scope violation: the constrained retry
    prior_failures: tuple[str, ...] = ()  # the task's last quarantine reasons, newest first
    past_outcomes: tuple[PastOutcome, ...] = ()
    rules_block: str = ""
    widened_files: tuple[str, ...] = field(default=())
    facts_block: str = ""
    head_said: str = ""  # what the gate said at the integration head, before any change (preflight)
    head_green: bool = False  # the gate already passed at the integration head


def _section(title: str, body: str) -> str:
    return f"## {title}\n\n{body.rstrip()}\n"


def render_scope_block(files: Sequence[str], protected: Sequence[str], widened: Sequence[str]) -> str:
    lines = ["You may change only these paths (globs):", *[f"- {f}" for f in files]]
    if widened:
        lines += ["", "Also allowed, by a person's decision:", *[f"- {f}" for f in widened]]
    if protected:
        lines += ["", "Never touch these, whatever else is allowed:", *[f"- {p}" for p in protected]]
    lines += ["", "Any change outside them is detected from git, undone, and counts against the task."]
    return _section("Scope", "\n".join(lines))


def render_constraint_block(rejected: Sequence[str]) -> str:
    """The block of the one constrained retry after a scope violation."""
    names = "\n".join(f"- {path}" for path in rejected)
    body = (
        "Your previous attempt changed files outside this task's scope:\n"
        f"{names}\n\n"
        "So the whole workspace was put back to where that attempt started: every edit of it is\n"
        "gone, those inside the scope too. Make the changes the task needs again, inside the scope.\n\n"
        "You may NOT touch these files. If the only correct fix requires one of them, print\n"
        "`SCOPE-REQUEST: <file> — <reason>` on a line of its own and stop without editing."
    )
    return _section("Scope violation — constrained retry", body)


def render_judge_block(judge: JudgeInvocation | None) -> str:
    """The judge's own invocation, or nothing at all when any part of it is unknown.

    A command with an empty argument would send the fixer to verify against the
    wrong thing, which is worse than no command: the block is all or nothing.
    """
    if judge is None or not judge.argv or not judge.cwd or any(not arg for arg in judge.argv):
        return ""
    import shlex

    body = (
        "The gate that judges this task runs exactly:\n\n"
        f"    cd {shlex.quote(judge.cwd)} && {shlex.join(judge.argv)}\n\n"
        "Run this before you finish. A local check from the task worktree (another test command, another\n"
        "directory) is NOT the judge, and can pass where the judge fails."
    )
    return _section("How this task is judged", body)


def render_prior_failures(reasons: Sequence[str], limit: int = 3) -> str:
    if not reasons:
        return ""
    items = "\n".join(f"- {quoted(reason)}" for reason in list(reasons)[:limit])
    return _section("Earlier attempts at this task failed", items)


def render_past_outcomes(outcomes: Sequence[PastOutcome]) -> str:
    """Resolved lessons of the same failure class; present only when there is one.
    How many is the caller's budget (the policy's `lessons_per_prompt`)."""
    if not outcomes:
        return ""
    lines = []
    for item in outcomes:
        how = ", ".join(item.resolved_by) or "unknown"
        where = f"task {item.task}, {item.resolved_at[:10]}"
        seen = f", {item.count} times (latest: {where})" if item.count > 1 else f" ({where})"
        lines.append(f"- `{quoted(item.signature)}` — resolved by {how}{seen}")
    return _section(ADVISORY_HEADING, "\n".join(lines))


def render_prompt(data: PromptInput) -> str:
    """The whole prompt for one dispatch, implement or fix."""
    parts = [f"# Task {data.slug}/{data.task}: {data.title}\n", data.prompt.rstrip() + "\n"]
    parts.append(render_scope_block(data.files, data.protected, data.widened_files))
    if data.rejected_files:
        parts.append(render_constraint_block(data.rejected_files))
    if data.mode == "fix":
        tail = data.gate_output.strip()
        body = "The gate is red after the last change. Make it green within the scope above."
        if tail:
            body += "\n\nIts output (the end of it):\n\n```\n" + quoted(tail[-6000:]) + "\n```"
        if data.head_said:
            body += ("\n\nAt the integration head, before any change, the gate said: "
                     f"`{quoted(data.head_said)}`" + (" (green)." if data.head_green else "."))
        parts.append(_section(f"Repair attempt {data.attempt}", body))
    if data.mode == "implement" and data.head_green:
        parts.append(_section("The gate is already green", "The gate already passes at the integration head, "
                              "before any change. If the task asks for nothing the gate does not already check, "
                              "it may be done: then change nothing and say so."))
    parts.append(render_judge_block(data.judge))
    parts.append(render_prior_failures(data.prior_failures))
    parts.append(render_past_outcomes(data.past_outcomes))
    if data.rules_block.strip():
        parts.append(quoted(data.rules_block.rstrip()) + "\n")
    if data.facts_block.strip():
        parts.append(quoted(data.facts_block.rstrip()) + "\n")
    return "\n".join(p for p in parts if p)
