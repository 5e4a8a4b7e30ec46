"""A run's outcome lines print as the inert console prints them, rich imported only when a line needs it."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from failres.cli import common

LINES = [
    "cost/t1: committed",
    "cost/t2: quarantined (gate-not-green-after-implementer, by the implementer): 1 failed … (git failres journal cost)",
    "  what would change the outcome:",
    "    - [bold red]markup[/bold red] is data",
    "src/\x1b]0;pwned\x07evil.py: a title a terminal would set",
    "over\rwrite and a bell\x07",
    "two\nlines",
    "a\ttab, expanded",
    "wide 漢字 and an emoji code :smile:",
    "abc\u202edcb.py",
    "a\u00a0no-break space",
    "",
]


def piped(encoding: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict", write_through=True)


def written(stream: io.TextIOWrapper) -> bytes:
    return stream.buffer.getvalue()


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_each_line_is_written_byte_for_byte_as_the_console_writes_it(monkeypatch, encoding: str) -> None:
    for line in LINES:
        if encoding == "ascii" and not common.inert(line, multiline=True).isascii():
            continue  # both refuse it alike (UnicodeEncodeError): rich's own message says more
        by_rich = piped(encoding)
        monkeypatch.setattr(sys, "stdout", by_rich)
        common.console().print(line, markup=False, soft_wrap=True)
        ours = piped(encoding)
        monkeypatch.setattr(sys, "stdout", ours)
        common.print_lines([line])
        assert written(ours) == written(by_rich), line


def test_lines_rich_writes_unchanged_print_without_importing_rich() -> None:
    code = ("import sys; from failres.cli.common import print_lines; "
            "print_lines(['cost/t1: committed', 'cost/t2: quarantined … (git failres journal cost)']); "
            "print('rich' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8",
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"}, check=True)
    assert (done.stdout, done.stderr) == ("cost/t1: committed\ncost/t2: quarantined … (git failres journal cost)\n",
                                          "False\n")


def test_a_line_with_a_tab_goes_through_rich_which_expands_it() -> None:
    code = "import sys; from failres.cli.common import print_lines; print_lines(['a\\tb']); print('rich' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.stdout == "a       b\nTrue\n"
