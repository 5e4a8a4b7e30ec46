"""The one error boundary: exceptions in, exit codes and one-line messages out.

Expected failures (bad input, configuration, a git state the person must fix)
print `error: ...` and, where one helps, `hint: ...`, and exit 2 (or 1 for work
that ran and did not go green). Anything unforeseen is logged with its traceback
under the repository's git dir, and the person is told where: exit 3.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath

from failres import beneath
from failres.errors import EXIT_BAD_INPUT, EXIT_CLOSED_PIPE, EXIT_INTERNAL, FailresError, exit_code_for
from failres.inert import inert
from lessons.errors import LessonsError


def _one_line(text: str) -> str:
    # Messages quote what the person or a seat wrote (a key, a path, a record), so
    # they are made inert: an escape sequence in a file name must not reach the terminal.
    return inert(" ".join(str(text).split())) or "failed"


def log_place() -> tuple[Path, PurePath]:
    """Where unexpected errors are logged, as (a trusted root, the log beneath it).

    `<git common dir>/failres/log/failres.log`, else a temp dir's `failres-log/`. A
    seat can plant a link at either name, so the append goes through `beneath`.
    """
    name = PurePath("failres.log")
    try:
        import pygit2

        path = pygit2.discover_repository(os.getcwd())
        if path:
            return Path(path), "failres" / PurePath("log") / name
    except Exception:  # the boundary must not fail while reporting a failure
        pass
    import tempfile

    return Path(tempfile.gettempdir()), "failres-log" / name


def write_crash_log(exc: BaseException) -> Path | None:
    import traceback
    from datetime import UTC, datetime

    try:
        root, relative = log_place()
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        text = f"--- {stamp} argv={sys.argv!r}\n" + "".join(traceback.format_exception(exc))
        beneath.append_file(root, relative, text.encode("utf-8", "replace"))
        return root / relative
    except (OSError, ValueError):
        return None


def _cli_signals() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """The exit, abort and usage-error types of the CLI layer.

    Newer typer carries its own copy of click; older ones use click itself. Both
    are recognised so the boundary maps them the same way. Asked for when something
    was raised: a process that never imported typer (a read command's start) has none
    of its exceptions to meet, and does not import it for that.
    """
    if "typer" not in sys.modules:
        return (), (), ()
    import typer

    exits: list[type] = [typer.Exit]
    aborts: list[type] = [typer.Abort]
    usage: list[type] = [getattr(typer, "TyperException", typer.Exit)]
    try:
        import click
    except ImportError:
        pass
    else:
        exits.append(click.exceptions.Exit)
        aborts.append(click.exceptions.Abort)
        usage.append(click.ClickException)
    return tuple(exits), tuple(aborts), tuple(usage)


def usage_error_lines(usage: BaseException) -> tuple[str, str]:
    """A parser's complaint in failres's own style: one `error:` line and a `hint:`.

    The parser's own form ("Usage: ... Try ... Error: ...") would be a second error
    style, and a script reading stderr would need to know both.
    """
    format_message = getattr(usage, "format_message", None)
    text = _one_line(format_message() if format_message else str(usage))
    param = getattr(usage, "param", None)
    if type(usage).__name__ == "MissingParameter" and param is not None:
        # The parser names a missing argument by its Python name; help shows its metavar.
        opts = [o for o in getattr(param, "opts", ()) if o.startswith("-")]
        text = (f"missing option {max(opts, key=len)}" if opts
                else f"missing argument {getattr(param, 'metavar', None) or str(param.name).upper()}")
    hint = ""
    for marker in (" Did you mean ", " (Possible options: "):
        if marker in text:
            text, _, suggestion = text.partition(marker)
            hint = marker.strip(" (") + " " + suggestion.rstrip(")")
    text = text.rstrip(".")
    text = text[:1].lower() + text[1:]
    ctx = getattr(usage, "ctx", None)
    command = getattr(ctx, "command_path", None) or "git failres"
    see = f"see '{command} -h'"
    hint = f"{hint[:1].lower()}{hint[1:]}; {see}" if hint else see
    return text, hint


def _undecodable_argument(argv: Sequence[str]) -> str | None:
    """The first argument holding bytes the file system decoding could not make text of, shown escaped."""
    for argument in argv:
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return os.fsencode(argument).decode("utf-8", "backslashreplace")
    return None


class _OneLineWarnings:
    """What failres logs while a command runs, as a person reads it: `warning: ...` or
    `error: ...` on one line, made inert (it may quote a damaged record's path or a seat's words)."""

    def format(self, record) -> str:
        import logging

        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f" ({type(error).__name__}: {error})"
        level = "warning" if record.levelno < logging.ERROR else "error"
        return f"{level}: {_one_line(inert(text))}"


def _show_warnings() -> None:
    """Route failres's log lines to stderr in its own error style, unless a host (tests) set up logging."""
    import logging

    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineWarnings())  # type: ignore[arg-type]  # a formatter is what formats
    handler.setLevel(logging.WARNING)
    root.addHandler(handler)


class _ShowWarningsOnceLoggingLoads:
    """A finder that finds nothing itself: it gives `logging` failres's style as it is first imported.

    Most commands never log, and `logging` (with the traceback module it brings) was a
    tenth of what a read command adds to Python's start. A module that logs imports it,
    and its first line is shown in failres's style all the same.
    """

    def find_spec(self, name: str, path=None, target=None):
        if name != "logging":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenShowWarnings(spec.loader)
        return spec


class _ThenShowWarnings:
    """`logging`'s own loader, and once the module has run, `_show_warnings`."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def __getattr__(self, name: str):
        return getattr(self._loader, name)  # get_source and the rest, as the loader has them

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _show_warnings()


def _show_warnings_when_logging() -> None:
    if "logging" in sys.modules:
        _show_warnings()
    elif not any(isinstance(finder, _ShowWarningsOnceLoggingLoads) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ShowWarningsOnceLoggingLoads())


def _quiet_closed_pipe() -> int:
    """A reader such as `head` went away; the output was not wanted any more. Quiet, and
    the exit status git's own commands give there: 128 + SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere at shutdown
    except (OSError, ValueError):
        pass
    return EXIT_CLOSED_PIPE


def run_guarded(invoke: Callable[[Sequence[str] | None], object], argv: Sequence[str] | None) -> int:
    """Call the CLI and map whatever happens to an exit code."""
    _show_warnings_when_logging()
    err = sys.stderr
    try:
        result = invoke(argv)
        sys.stdout.flush()  # inside the boundary: a reader that went away is met here, not at shutdown
        return result if isinstance(result, int) else 0
    except _cli_signals()[0] as done:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _quiet_closed_pipe()
        return done.exit_code
    except _cli_signals()[1]:
        err.write("error: aborted\n")
        return 130
    except _cli_signals()[2] as usage:
        message, hint = usage_error_lines(usage)
        err.write(f"error: {inert(message)}\n")
        err.write(f"hint: {inert(hint)}\n")
        return EXIT_BAD_INPUT
    except (FailresError, LessonsError) as known:
        err.write(f"error: {_one_line(str(known))}\n")
        hint = getattr(known, "hint", None)
        if hint:
            err.write(f"hint: {_one_line(hint)}\n")
        return exit_code_for(known)
    except KeyboardInterrupt:
        err.write("error: interrupted\n")
        return 130
    except BrokenPipeError:
        return _quiet_closed_pipe()
    except SystemExit as gone:
        # click meets a closed pipe itself and exits 1 ("a task did not go green"): the
        # same closed pipe as above, whichever layer saw it first.
        if isinstance(gone.__context__, OSError) and gone.__context__.errno == errno.EPIPE:
            return _quiet_closed_pipe()
        raise
    except Exception as unexpected:  # the boundary: everything unforeseen ends here
        undecodable = _undecodable_argument(sys.argv[1:] if argv is None else argv)
        if isinstance(unexpected, UnicodeEncodeError) and undecodable is not None:
            # Bytes that are not UTF-8 reach a value that must be text (an id, a key, a
            # record field): refused before anything was written.
            err.write(f"error: argument {inert(undecodable)} holds bytes that are not UTF-8\n")
            err.write("hint: ids, keys, paths and answers that failres records must be UTF-8 text\n")
            return EXIT_BAD_INPUT
        path = write_crash_log(unexpected)
        err.write(f"error: unexpected error: {_one_line(f'{type(unexpected).__name__}: {unexpected}')}\n")
        where = f"the traceback is in {path}" if path else "no log could be written"
        err.write(f"hint: {where}; please report it\n")
        return EXIT_INTERNAL
