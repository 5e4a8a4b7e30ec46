"""What the installed git hooks run: `python -m failres.hooks.run HOOK [ARGS...]`.

A hook runs on every merge a person makes, almost all of them nothing to do with
failres, so the common case must cost little more than starting Python: this
module imports only the standard library and asks `git log` (which filters by
trailer itself) whether the merge brought in a task commit at all. Only when it
did are the store, the configuration and pygit2 imported.

Whatever happens here, the exit status is 0: a hook that fails can abort a
person's merge (pre-merge-commit) or alarm them for nothing (post-merge), and
failres having a bad day is never a reason to. Errors go to
`<git-common-dir>/failres/log/hooks.log`; `git failres label` can redo a stamp.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from failres import beneath
from failres.inert import inert
from failres.landing.trailers import GREP_PATTERN, task_of_branch_name, tasks_in_message

HOOKS = ("pre-merge-commit", "post-merge")
LOG_NAME = "hooks.log"


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)


def log_line(text: str) -> str | None:
    """Append one entry to the hooks log and return its path; never raises (a hook must not fail while reporting)."""
    try:
        found = _git("rev-parse", "--path-format=absolute", "--git-common-dir")
        base = os.fsdecode(found.stdout.strip()) if found.returncode == 0 else ""
        if not base:
            return None
        # Through `beneath`: a seat may have left a link at the log's name.
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        relative = os.path.join("failres", "log", LOG_NAME)
        entry = f"--- {stamp} pid={os.getpid()}\n{text.rstrip()}\n"
        beneath.append_file(Path(base), relative, entry.encode("utf-8", "replace"))
        return os.path.join(base, relative)
    except Exception:  # noqa: BLE001 - the last resort has no one left to tell
        return None


def post_merge(args: list[str]) -> int:
    """After a merge: stamp the tasks it landed. `$1` is 1 for `--squash`, which lands nothing yet.

    A squash merge only prepares the index; the person commits later (the squashed
    messages, trailers included, go into that commit's message), so `label`
    catches it then. pre-commit passes the flag as PRE_COMMIT_IS_SQUASH_MERGE.
    """
    squash = args[0] if args else os.environ.get("PRE_COMMIT_IS_SQUASH_MERGE", "0")
    if squash.strip() == "1":
        return 0
    # ORIG_HEAD..HEAD is what the merge added, for a fast-forward and a true merge alike.
    listed = _git("log", "-z", "-E", f"--grep={GREP_PATTERN}", "--format=%B", "ORIG_HEAD..HEAD")
    if listed.returncode != 0:
        log_line(f"post-merge: git log ORIG_HEAD..HEAD failed: {listed.stderr.decode(errors='replace').strip()}")
        return 0
    keys: list[tuple[str, str]] = []
    for message in listed.stdout.decode("utf-8", "replace").split("\0"):
        for key in tasks_in_message(message):
            if key not in keys:
                keys.append(key)
    if not keys:
        return 0
    from pathlib import Path

    from failres.containment import moves
    from failres.landing.label import stamp_after_merge

    moves.install()  # the stamp is the person's own store write, never a seat's to a live run
    for result in stamp_after_merge(Path.cwd(), keys):
        if result.stamped:
            labels = ", ".join(result.resolved_by)
            print(inert(f"failres: {result.slug}/{result.task} landed; stamped {len(result.stamped)} lesson(s): "
                        f"{labels}"), file=sys.stderr)
        elif result.landed_event:
            print(inert(f"failres: {result.slug}/{result.task} landed"), file=sys.stderr)
    return 0


def pre_merge_commit(args: list[str]) -> int:
    """Before a merge commit is written: bookkeeping only, nothing is stamped.

    The merge commit does not exist yet (so there is no landing to name) and the
    merge can still be called off (a commit-msg hook, an emptied message), so
    stamping here could record a landing that never happens. post-merge is where
    stamps are written. This only tells the person what will happen; git names
    what is being merged in GIT_REFLOG_ACTION (MERGE_HEAD is not written yet).
    """
    found = task_of_branch_name(os.environ.get("GIT_REFLOG_ACTION", ""))
    if found is not None:
        print(inert(f"failres: merging task {found[0]}/{found[1]}; its lessons are stamped once the merge is done"),
              file=sys.stderr)
    return 0


def run_hook(hook: str, args: list[str]) -> int:
    """Run failres's part of `hook`; always 0, errors are logged."""
    try:
        if hook == "post-merge":
            return post_merge(args)
        if hook == "pre-merge-commit":
            return pre_merge_commit(args)
        log_line(f"{hook}: not a hook failres handles (args {args!r})")
    except BaseException as error:  # noqa: BLE001 - see the module docstring: never fail the person's merge
        where = log_line(f"{hook} {args!r} failed:\n{traceback.format_exc()}") or "no log could be written"
        try:
            cause = inert(" ".join(str(error).split()))[:300] or type(error).__name__
            print(f"failres: the {hook} hook failed (the merge is unaffected; {where}): {cause}; "
                  "once that is fixed, `git failres label` redoes the stamp", file=sys.stderr)
        except Exception:  # noqa: BLE001
            pass
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return 0
    return run_hook(args[0], args[1:])


if __name__ == "__main__":
    sys.exit(main())
