"""`lessons list|show|relevant|import`: reading what quarantines taught, and loading other harnesses' lessons."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.clidoc.model import LESSONS
from failres.cli.common import console, echo_text, emit_json, open_context
from failres.errors import UsageError

lessons_app = typer.Typer(help="Read lessons (what each quarantine taught) and import them. Alone, it is lessons list.",
                          no_args_is_help=True, epilog="git failres lessons list --unresolved")
app.add_typer(lessons_app, name="lessons", rich_help_panel=LESSONS)


def _when(ts: object) -> str:
    return str(ts or "")[:19].replace("T", " ")


def _print_lessons(lessons: list[dict]) -> None:
    from failres.cli.tables import Column, print_table

    rows = []
    for lesson in lessons:
        resolved = lesson.get("resolved_by")
        rows.append((str(lesson.get("id", ""))[:8], _when(lesson.get("ts")), f"{lesson.get('slug')}/{lesson.get('task')}",
                     lesson.get("failClass"), resolved if isinstance(resolved, list) else "(unresolved)",
                     lesson.get("signature")))
    columns = (Column("id"), Column("when"), Column("task"), Column("class"), Column("resolved by"),
               Column("signature", wraps=True))
    print_table(columns, rows)


def _require_known(store, slug: str | None, task: str | None) -> None:
    """An empty listing for a slug or task that neither a lesson nor the journal knows is a
    typo: say so (exit 2). A known task without lessons is an empty answer (exit 0)."""
    from failres.journal import list_slugs, read_journal
    from lessons.recall.retrieval import LessonFilter, list_lessons

    slugs = list_slugs(store)
    if slug and slug not in slugs and not list_lessons(store, LessonFilter(slug=slug), 1):
        msg = f'no plan "{slug}" is known here: no task of it ran and no lesson names it'
        raise UsageError(msg, hint="git failres status lists the plans and tasks that ran")
    if task and not list_lessons(store, LessonFilter(slug=slug, task=task), 1):
        ran = any(read_journal(store, name).for_task(task) for name in ([slug] if slug else slugs))
        if not ran:
            where = f'plan "{slug}"' if slug else "any plan"
            msg = f'no task "{task}" of {where} is known here: it never ran and no lesson names it'
            raise UsageError(msg, hint="git failres status lists the plans and tasks that ran")


def _limit(value: int | None) -> int | None:
    if value is not None and value < 1:
        msg = f"--limit must be at least 1, not {value}"
        raise UsageError(msg)
    return value


@lessons_app.command("list", epilog="git failres lessons list --unresolved")
def list_(
    slug: str = typer.Option(None, "--slug", help="Only this plan's lessons."),
    task: str = typer.Option(None, "--task", help="Only this task's lessons."),
    fail_class: str = typer.Option(None, "--fail-class", help="Only this failure class."),
    unresolved: bool = typer.Option(False, "--unresolved", help="Only lessons not stamped by a landing yet."),
    limit: int = typer.Option(None, "--limit", help="At most this many, newest first (default: policy list_limit)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON array with the contract's fields."),
) -> None:
    """Lessons, newest first, up to the policy's list_limit."""
    from failres.cli.policy_cmds import current_policy
    from failres.knowledge.lesson_views import lesson_document
    from failres.cli.tables import note_cut
    from lessons.recall.retrieval import LessonFilter, count_lessons, list_lessons

    ctx = open_context()
    which = LessonFilter(slug=slug, task=task, fail_class=fail_class, unresolved=unresolved)
    cap = _limit(limit) or current_policy(ctx).list_limit
    found = list_lessons(ctx.store, which, cap)
    if not found and (slug or task):
        _require_known(ctx.store, slug, task)
    if len(found) >= cap:
        note_cut(len(found), count_lessons(ctx.store, which), what="lessons")
    if json_out:
        emit_json([lesson_document(lesson) for lesson in found])
        return
    if not found:
        console().print("no lessons match")
        return
    _print_lessons(found)


@lessons_app.command(epilog="git failres lessons show 3f9a2b --diff")
def show(
    lesson_id: str = typer.Argument(..., metavar="ID", help="The lesson's id (a unique prefix will do)."),
    diff: bool = typer.Option(False, "--diff", help="Print its snapshot's diff against its integration head."),
    bundle: Path = typer.Option(None, "--bundle", help="Write a git bundle of its snapshot to this file."),
    json_out: bool = typer.Option(False, "--json", help="Print the whole lesson as JSON."),
) -> None:
    """One lesson, whole; its failing state as a diff or a bundle."""
    from failres.knowledge.lesson_views import find_lesson, snapshot_diff, write_bundle

    ctx = open_context()
    lesson = find_lesson(ctx.store, lesson_id)
    if bundle is not None:
        ref = write_bundle(ctx.top, lesson, bundle)
        if not json_out and not diff:
            console().print(f"wrote {bundle} ({ref})", markup=False)
    if diff:
        echo_text(snapshot_diff(ctx.top, lesson))
        return
    if json_out:
        emit_json(lesson)
        return
    if bundle is not None:
        return
    from failres.cli.tables import as_text

    out = console()
    for key in sorted(lesson):
        value = lesson[key]
        if key == "message" and isinstance(value, str) and "\n" in value.strip():
            # The message is the one field whose lines matter: it is printed whole, indented.
            out.print(f"{key}:", markup=False)
            for line in value.strip().splitlines():
                out.print(f"  {line}", markup=False)
            continue
        out.print(f"{key}: {as_text(value)}", markup=False)


@lessons_app.command(epilog="git failres lessons relevant --fail-class gate-not-green-after-fixer")
def relevant(
    fail_class: str = typer.Option(..., "--fail-class", help="The failure class at hand."),
    limit: int = typer.Option(None, "--limit", help="At most this many (default: policy lessons_per_prompt)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON array with the contract's fields."),
) -> None:
    """Resolved lessons of one failure class, newest first: what a fixer's prompt is drawn from."""
    from failres.cli.policy_cmds import current_policy
    from failres.knowledge.lesson_views import lesson_document
    from failres.cli.tables import note_cut
    from lessons.recall.retrieval import LessonFilter, count_lessons, relevant_lessons

    ctx = open_context()
    cap = _limit(limit) or current_policy(ctx).lessons_per_prompt
    found = relevant_lessons(ctx.store, fail_class, cap)
    if len(found) >= cap:
        note_cut(len(found), count_lessons(ctx.store, LessonFilter(fail_class=fail_class, resolved=True)),
                 what=f"resolved {fail_class} lessons")
    if json_out:
        emit_json([lesson_document(lesson) for lesson in found])
        return
    if not found:
        console().print(f"no resolved lessons of {fail_class}", markup=False)
        return
    _print_lessons(found)


@lessons_app.command("import", epilog="git failres lessons import other-harness.jsonl")
def import_(
    files: list[Path] = typer.Argument(..., metavar="FILE...", help="JSONL files, one lesson a line."),
    json_out: bool = typer.Option(False, "--json", help="Print what was imported as JSON."),
) -> None:
    """Load lessons another harness wrote (JSONL). A bad line: exit 2, nothing written."""
    from lessons.recall.importer import import_lessons

    from failres.cli.policy_cmds import current_policy
    from lessons.bounds.capacity import reclaim_full_stores

    ctx = open_context()
    policy = current_policy(ctx)  # a bad policy is refused before anything is written
    result = import_lessons(ctx.store, files)
    reclaim_full_stores(ctx.store, policy, names=("lessons",), known=result.documents)
    if json_out:
        emit_json({"files": list(result.files), "lessons": result.lessons, "imported": result.imported,
                   "unchanged": result.unchanged, "commits": list(result.commits)})
        return
    console().print(f"imported {result.imported} lesson(s) in {len(result.commits)} commit(s)"
                    + (f"; {result.unchanged} already in the store" if result.unchanged else ""), markup=False)
