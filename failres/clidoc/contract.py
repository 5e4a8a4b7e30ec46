"""What a plan writer and an agent author rely on, as the manual page says it.

The command tree describes the commands; these are the agreements that are not a
command: the plan file, what a seat is given and what its output and exit status
mean, the `SCOPE-REQUEST:` line, the pager. They are data (title, paragraphs,
examples) so the manual page renders them and a test can hold each example to the
code that reads it (the plan parser, the request parser).
"""

from __future__ import annotations

from dataclasses import dataclass

# One line a seat prints to ask for a file outside its scope, exactly as the parser accepts
# it (failres.engine.taxonomy.parse_scope_requests); the tests parse these examples.
SCOPE_REQUEST_EXAMPLES: tuple[str, ...] = (
    "SCOPE-REQUEST: src/util/dates.py \u2014 the parser the task names lives there",
    "SCOPE-REQUEST: src/util/dates.py - the same, with a plain hyphen",
    'SCOPE-REQUEST: "docs/user guide.md": a path with a space, quoted',
)

PLAN_EXAMPLE = """\
slug = "release-readiness"        # a-z or 0-9 first, then a-z, 0-9, ".", "_", "-"

[[tasks]]
id = "t1"                         # the same spelling; branch failres/SLUG/ID
title = "Fix the date parser"     # optional; default: the id
prompt = "Make tests/test_dates.py pass without changing its assertions."
files = ["src/dates.py", "src/util/*.py"]   # the scope: paths or globs from the top
gate = "tests"                    # optional; default: the first [gates.NAME]

[[tasks]]
id = "t2"
prompt = "Document the new date formats."
files = ["docs/dates.md"]
after = ["t1"]                    # optional; starts once t1 has landed, from the head that holds it
"""


@dataclass(frozen=True)
class Topic:
    title: str
    paragraphs: tuple[str, ...]
    example: str = ""
    terms: tuple[tuple[str, str], ...] = ()


PLANS = Topic(
    "PLANS",
    ("A plan is a TOML file given to git failres run PLAN. It names a slug and one or more [[tasks]]; each task "
     "has an id, a prompt (what the implementer is asked) and files (its scope: the only paths any seat may "
     "change for it). An unknown key, a repeated id, a gate that is not configured, a path outside the "
     "repository or an after that names no task of the plan is refused (exit 2, nothing written). git failres "
     "run PLAN --dry-run checks a plan against the configuration and the repository and runs nothing.",),
    example=PLAN_EXAMPLE,
)

SEATS = Topic(
    "SEATS",
    ("A seat (implementer, fixer, resolver) runs the program of the binding it names: the binding's command, "
     "an argument list run without a shell, its placeholders ({task}, {mode}, {prompt_file}, {attempt}, "
     "{dispatch_dir} ...) filled in. It runs in the task's workspace, a checkout of the integration head with a "
     "git directory of its own, outside your checkout and your git directory. The prompt is on its standard "
     "input and in the file FAILRES_PROMPT_FILE names. Its standard output and standard error are read as one "
     "stream, kept (bounded, secrets redacted) for git failres logs. It has the binding's timeout; after it, "
     "or once the dispatch ends, no process it started is left running.",
     "A seat's exit status: 0 means it is done, and the gate alone decides whether the work is good. "
     "Non-zero means the seat failed: an exit code listed in [engine_down] exit_codes, or output matching "
     "[engine_down] patterns, means its engine is down (probed with the binding's health command and "
     "retried: wrapper-engine-down); otherwise it is quarantined as seat-crashed. A seat still running at "
     "its timeout is ended: seat-timeout.",
     "What a seat may change is the task's files. Any other change (an edit, a deletion, a new file, a "
     "symbolic link, its own git's refs or configuration) is undone; the first such violation gets one "
     "constrained retry whose prompt names the files, a second quarantines the task and raises a decision. "
     "What it writes outside the workspace by absolute path is detected and undone (seat-tamper).",
     "A seat that needs a file outside its scope asks for it with a line of its own in its output: the "
     "marker SCOPE-REQUEST:, the path (from the repository top; quoted with \", ' or ` when it holds a "
     "space), then an em dash, an en dash, \" - \", \"--\" or \":\" and the reason. Markdown emphasis around "
     "the marker (**SCOPE-REQUEST:**) is allowed. At most 20 requests are read per dispatch, the first per "
     "file; a path is at most 1024 characters, a reason 1000. A line that also stands in the seat's prompt "
     "is taken for an echo and ignored, as is the placeholder <file>. With Claude Code's --output-format "
     "json the lines are read from its result text. A request stops the task at once, without a retry: "
     "nothing of that dispatch is committed, its state is kept with the task's lesson, and a decision "
     "carries the files and reasons. A person answers it with git failres decide ID --scope-files PATH..., "
     "and the next git failres run starts the task again with that scope. No decision widens into "
     "[scope] protected.",),
    example="\n".join(SCOPE_REQUEST_EXAMPLES),
    terms=(
        ("FAILRES_SLUG", "The plan's slug."),
        ("FAILRES_TASK", "The task's id."),
        ("FAILRES_MODE", "implement for the implementer, fix for the fixer after a red gate."),
        ("FAILRES_ATTEMPT", "The dispatch's attempt number, 1 for the first."),
        ("FAILRES_WORKTREE", "The task's workspace, which is also the working directory."),
        ("FAILRES_PROMPT_FILE", "The file that holds the prompt (the same text is on standard input)."),
        ("FAILRES_DISPATCH_DIR", "A directory for this dispatch alone, outside the workspace and kept with its "
                                 "logs: where a recipe puts the agent's own state and transcript."),
    ),
)

PAGER = Topic(
    "PAGER",
    ("On a terminal, long output (journal, logs, lessons, decisions, report, config show, policy show, "
     "prompt and the other listings) goes through the pager git would use: GIT_PAGER, else core.pager, else "
     "PAGER, else less; an empty value or cat means none. LESS=FRX and LV=-c are set when unset, as git sets "
     "them, so a short answer prints and returns. git failres --no-pager (or -P), before the command, turns "
     "the pager off, as git --no-pager failres does; --paginate (or -p) pages any command. Output to a pipe "
     "or a file is never paged.",
     "Tables are fitted to the terminal's width: a cell that does not fit is cut and ends with an ellipsis, "
     "a row is never wrapped. Sent to a pipe or a file, nothing is cut or wrapped: a header line, then one "
     "line per record, whole. A listing the knowledge policy cuts (list_limit, lessons_per_prompt, "
     "timeline_limit) says on standard error how many of how many it shows, and --limit N shows more.",),
)

TOPICS: tuple[Topic, ...] = (PLANS, SEATS, PAGER)
