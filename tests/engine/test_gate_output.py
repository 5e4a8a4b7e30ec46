"""A gate and seats that print for a terminal: what failres keeps and shows is plain text.

Found on a real project whose pytest configuration said `--color=yes`: every summary, the
fixer's prompt, the journal, the report and `--json` carried `ESC[31m` (shown as U+FFFD),
and signatures read the codes as durations. Only the dispatch's own log file keeps the bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store
from project import Project

# A pytest-like run: a progress line redrawn with carriage returns, a hyperlink, a window
# title, colours and bold on the failure and on the summary line (the signature's line).
COLOURED_CHECK = r'''import os, sys
sys.path.insert(0, 'src')
from calc import add
colour = os.environ.get("CHECK_COLOUR") == "1"
def c(code, text):
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text
if colour:
    sys.stdout.write("\x1b]0;pytest\x07collecting  10%\rcollecting  60%\rcollecting 100%\r\n")
    sys.stdout.write("see \x1b]8;;file:///docs\x1b\\the docs\x1b]8;;\x1b\\\n")
else:
    sys.stdout.write("collecting 100%\nsee the docs\n")
if add(2, 3) != 5:
    print(c("1;31", "E       assert " + str(add(2, 3)) + " == 5"))
    print(c("31", "FAILED tests/check.py::test_add") + c("31;1", " 1 failed") + c("31", " in 0.03s"))
    sys.exit(1)
print(c("32", "1 passed in 0.01s"))
'''
# A seat that colours its own output and keeps the prompt it was given.
SEAT_SAYS = "\x1b[1;34mthinking\x1b[0m \x1b[2K\rdone \x1b]0;seat\x07looking"


def coloured_project(root: Path, *, colour: bool) -> Project:
    project = Project.create(root)
    (project.top / "tests" / "check.py").write_text(COLOURED_CHECK)
    git(project.top, "commit", "-qam", "a check that colours its output")
    keep = f'cp "$FAILRES_PROMPT_FILE" {project.agents}/fixer-prompt.md'
    project.configure(implementer=[{"print": SEAT_SAYS}], fixer=[{"print": SEAT_SAYS, "shell": [keep]}],
                      extra="[repair]\nmax_attempts = 1\n")
    config = project.top / ".failres.toml"
    config.write_text(config.read_text().replace(
        'timeout = "60s"\n[bindings.impl]',
        f'timeout = "60s"\nenv = {{ CHECK_COLOUR = "{1 if colour else 0}" }}\n[bindings.impl]', 1))
    return project


def assert_plain(where: str, text: str) -> None:
    assert "\x1b" not in text and "\ufffd" not in text and "\r" not in text and "\x07" not in text, where


def test_a_coloured_gate_leaves_no_escape_in_anything_kept_or_shown_and_its_signature_is_the_plain_ones(
        tmp_path: Path, cli) -> None:
    project = coloured_project(tmp_path / "coloured", colour=True)
    ran = cli(project.top, "run", str(project.plan()))
    assert ran.code == 1, ran.err
    assert_plain("run summary", ran.out + ran.err)

    quarantined = [e for e in project.events() if e["type"] == "quarantined"][-1]
    assert quarantined["failClass"] == "gate-not-green-after-fixer"
    assert "FAILED tests/check.py::test_add 1 failed" in quarantined["message"]
    assert "collecting 100%\nsee the docs\n" in quarantined["message"]
    prompt = (project.agents / "fixer-prompt.md").read_text(encoding="utf-8")
    assert "E       assert -1 == 5" in prompt and "collecting 100%" in prompt
    assert_plain("the fixer's prompt", prompt)
    lessons, _ = read_lessons(Store(project.top))
    assert_plain("lessons", json.dumps(lessons, ensure_ascii=False))
    for args in (("journal", "rr"), ("journal", "rr", "--json"), ("report",), ("report", "--json"),
                 ("status", "--json"), ("lessons", "list", "--json"), ("logs", "rr", "t1"),
                 ("logs", "rr", "t1", "--json")):
        shown = cli(project.top, *args)
        assert shown.code == 0, (args, shown.err)
        assert_plain(" ".join(args), shown.out)
        if args[0] == "logs":
            assert "done looking" in shown.out and "collecting 100%" in shown.out
            assert "collecting  60%" not in shown.out, shown.out

    # The dispatch's own log keeps what the gate and the seat printed, byte for byte.
    [first, fixer] = project.dispatch_logs()
    assert b"\x1b[1;31mE       assert -1 == 5\x1b[0m" in (first / "gate.log").read_bytes()
    assert b"collecting  10%\rcollecting  60%\r" in (fixer / "gate.log").read_bytes()
    assert SEAT_SAYS.encode() in (first / "seat.log").read_bytes()

    plain = coloured_project(tmp_path / "plain", colour=False)
    assert cli(plain.top, "run", str(plain.plan()), "--quiet").code == 1
    [plain_lesson] = read_lessons(Store(plain.top))[0]
    [coloured_lesson] = lessons
    assert coloured_lesson["signature"] == plain_lesson["signature"]
    assert coloured_lesson["signature"].endswith("FAILED tests/check.py::test_add 1 failed in <dur>")


def test_the_seat_log_keeps_the_plain_text_where_an_escape_could_hide_a_secret_from_the_redactor(
        tmp_path: Path, cli) -> None:
    token = "ghp_R4nd0mT0k3nV4lu3Zq8Wn2Lk5Pd7Xc9Vb1Mj4"
    hidden = token[:4] + "\x1b[0m" + token[4:]
    project = Project.create(tmp_path)
    project.configure(implementer=[{"print": f"the key is \x1b[31m{hidden}\x1b[0m"}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 1
    [first] = project.dispatch_logs()
    kept = (first / "seat.log").read_bytes()
    assert token.encode() not in kept and token[4:].encode() not in kept
    assert b"\x1b" not in kept and b"the key is" in kept


# uvu's closing block, as dequal's `npm test` prints it on a failure: the counts, then a duration.
UVU_CHECK = ("import sys\nsys.path.insert(0, 'src')\nfrom calc import add\nok = add(2, 3) == 5\n"
             "print('  FAIL  add  \"two and three\"' if not ok else '')\n"
             "print('  Total:     2')\nprint('  Passed:    %d' % (2 if ok else 1))\nprint('  Skipped:   0')\n"
             "print('  Duration:  11.44ms')\nsys.exit(0 if ok else 1)\n")


def test_a_runner_that_ends_on_its_duration_is_summed_up_by_its_counts(tmp_path: Path, cli) -> None:
    """A quarantine of a uvu gate once said only "exit 1: Duration: 11.44ms"."""
    project = Project.create(tmp_path)
    (project.top / "tests" / "check.py").write_text(UVU_CHECK)
    git(project.top, "commit", "-q", "-am", "a uvu-like check")
    project.configure(implementer=[{"print": "no change"}])
    ran = cli(project.top, "run", str(project.plan()), "--quiet")
    assert ran.code == 1, ran.err
    [event] = [e for e in project.events() if e["type"] == "quarantined"]
    assert event["message"].splitlines()[0].endswith("exit 1: Total: 2, Passed: 1, Skipped: 0"), event["message"]


def test_a_last_line_that_counts_is_the_summary_as_it_always_was() -> None:
    from failres.engine.runtime import verdict_line

    pytest_end = ["FAILED tests/test_x.py::test_a - AssertionError: 5 != 4", "2 failed, 11 passed in 0.34s"]
    assert verdict_line(pytest_end) == "2 failed, 11 passed in 0.34s"
    assert verdict_line(["something broke"]) == "something broke"
    mocha_end = ["43 passing (10ms)", "1 failing", "1) Set", "AssertionError: expected true", "at test/index.js:10:5"]
    assert verdict_line(mocha_end) == "43 passing (10ms), 1 failing"
