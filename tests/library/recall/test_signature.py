"""Failure signatures: the same failure collides across runs; different failures stay apart."""

from __future__ import annotations

import random
import string
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.recall.signature import MAX_SIGNATURE_TEXT, first_line, normalise, signature

# ── one rule at a time ────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T03:27:40Z boom", "<ts> boom"),
        ("2026-11-30T03:27:40.123456+01:00 boom", "<ts> boom"),
        ("2026-11-30 03:27:40 boom", "<ts> boom"),
        ("2026-11-30 03:27:40,123 boom", "<ts> boom"),
        ("report for 2026-11-30 failed", "report for <ts> failed"),
        ("Nov 30 03:27:40 host kernel: oops", "<ts> host kernel: oops"),
        ("Mon Nov 30 03:27:40 2026 +0100 commit", "<ts> commit"),
        ("Mon, 30 Nov 2026 03:27:40 GMT expired", "<ts> expired"),
        ("at 03:27:40.5 timeout", "at <ts> timeout"),
        ("created 1796009260 exp 1796009260123", "created <ts> exp <ts>"),
    ],
)
def test_timestamps_become_ts(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3 failed in 12.3s", "3 failed in <dur>"),
        ("took 450ms", "took <dur>"),
        ("timed out after 1m30s", "timed out after <dur>"),
        ("finished in 3.2 seconds", "finished in <dur>"),
        ("real 0m1.234s", "real <dur>"),
    ],
)
def test_durations_become_dur(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("denied: /tmp/tmpa1b2c3d4/src/dates.py", "denied: <tmp>/src/dates.py"),
        ("denied: /tmp/pytest-of-root/pytest-12/test_x0/src/dates.py", "denied: <tmp>/src/dates.py"),
        ("denied: /tmp/pytest-of-root/pytest-12/test_x0/", "denied: <tmp>"),
        ("denied: /var/folders/x7/k2m9qz1b3c4d/T/tmpq8w7e6r5/a.py", "denied: <tmp>/a.py"),
        ("denied: /private/var/folders/x7/k2m9qz1b3c4d/T/a.py", "denied: <tmp>/a.py"),
        ("denied: /tmp/failres-wt-k2m9qzab/src/a.py", "denied: <tmp>/src/a.py"),
        ("denied: /tmp/build/out.log", "denied: <tmp>/build/out.log"),
        ("denied: C:\\Users\\bob\\AppData\\Local\\Temp\\tmpx8y7\\a.py", "denied: <tmp>/a.py"),
        ("wrote /tmp/tmpa1b2c3d4/a.py.", "wrote <tmp>/a.py."),
    ],
)
def test_temp_paths_become_tmp_with_generated_components_dropped(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /home/alice/proj/a.py", "open <home>/proj/a.py"),
        ("open /Users/bob/proj/a.py", "open <home>/proj/a.py"),
        ("open /root/.cache/x.json", "open <home>/.cache/x.json"),
        ("open C:\\Users\\bob\\proj\\a.py", "open <home>/proj/a.py"),
    ],
)
def test_home_paths_become_home_and_keep_the_rest(text, expected):
    assert normalise(text) == expected


def test_other_absolute_path_keeps_only_its_basename():
    text = 'File "/usr/lib/python3.11/site-packages/pkg/mod.py", line 12, in f'
    assert normalise(text) == 'File "<path>/mod.py", line <n>, in f'


def test_absolute_path_under_an_unknown_root_is_kept_because_it_is_data():
    assert normalise("GET /api/v1/users returned 404") == "GET /api/v1/users returned 404"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bad object 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a", "bad object <hex>"),
        ("fixed in a1b2c3d", "fixed in <hex>"),
        ("run 1b4e28ba-2fa1-11d2-883f-0016d3cca427 failed", "run <hex> failed"),
        ("<Foo object at 0x7f3a2b1c4d50>", "<Foo object at <addr>>"),
    ],
)
def test_hashes_ids_and_addresses_become_tokens(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("src/a.py:123: error", "src/a.py:<n>: error"),
        ("src/a.py:123:45: E501", "src/a.py:<n>:<n>: E501"),
        ("Makefile:12: recipe failed", "Makefile:<n>: recipe failed"),
        ("Expecting value: line 1 column 5", "Expecting value: line <n> column <n>"),
        ("Program.cs(12,5): error CS1002", "Program.cs(<n>,<n>): error CS1002"),
    ],
)
def test_positions_in_files_become_n(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("killed pid 4242", "killed pid <n>"),
        ("worker pid=4242 died", "worker pid <n> died"),
        ("sshd[4242]: denied", "sshd[pid <n>]: denied"),
        ("connect localhost:8080 refused", "connect localhost:<port> refused"),
        ("connect 127.0.0.1:5432 refused", "connect 127.0.0.1:<port> refused"),
        ("connect db.example.com:5432 refused", "connect db.example.com:<port> refused"),
        ("listening on port 8080", "listening on port <port>"),
    ],
)
def test_pids_and_ports_become_tokens(text, expected):
    assert normalise(text) == expected


def test_whitespace_collapses_to_single_spaces_on_one_line():
    assert normalise("  a \t b\n\nc\r\n ") == "a b c"


def test_redaction_markers_pass_through_unchanged():
    assert normalise("leaked [REDACTED:aws-access-key] at 2026-11-30") == "leaked [REDACTED:aws-access-key] at <ts>"


# ── meaning survives ──────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("command failed with exit status 1", "command failed with exit status 2"),
        ("GET /health returned HTTP 404", "GET /health returned HTTP 500"),
        ("3 failed, 10 passed in 1.2s", "4 failed, 10 passed in 1.2s"),
        ("AssertionError in /tmp/tmpa1b2c3d4/src/dates.py", "AssertionError in /tmp/tmpa1b2c3d4/src/times.py"),
        ("assert foo(1,2) == 3", "assert foo(1,3) == 3"),
        ("HRESULT 0x80070005", "HRESULT 0x80070002"),
        ("too many 503s", "too many 429s"),
        ("exit code:1", "exit code:2"),
    ],
)
def test_different_failures_keep_different_signatures(one, other):
    assert signature("unknown", one) != signature("unknown", other)


def test_same_message_under_different_failure_classes_differs():
    assert signature("gate-timeout", "boom") != signature("seat-timeout", "boom")


# ── signature ─────────────────────────────────────────────────────────────────


def test_signature_is_failure_class_bar_normalised_first_line():
    message = "\n\n   Error at 2026-11-30T03:27:40Z in /tmp/tmpa1b2c3d4/a.py:12  \nTraceback ..."
    assert signature("gate-not-green-after-fixer", message) == "gate-not-green-after-fixer|Error at <ts> in <tmp>/a.py:<n>"


def test_first_line_is_the_first_non_blank_line_stripped():
    assert first_line("\n \t\n  boom here \nsecond") == "boom here"
    assert first_line(" \n\n") == ""


def test_signature_of_a_blank_message_is_the_class_and_a_bar():
    assert signature("unknown", "\n  \n") == "unknown|"


def test_signature_text_is_cut_to_the_maximum_length():
    sig = signature("unknown", "word " * 200)
    assert len(sig) <= len("unknown|") + MAX_SIGNATURE_TEXT


def test_signature_never_carries_a_secret():
    token = "ghp_" + "Ab3d" * 9
    assert signature("unknown", f"push rejected for {token} at 2026-11-30") == (
        "unknown|push rejected for [REDACTED:github-token] at <ts>"
    )


def test_denials_in_fresh_temp_dirs_collide_so_the_repeated_failure_halt_fires():
    """Regression: 384 denied calls in 26 minutes.

    An agent kept retrying a denied write; each retry ran in a fresh temp dir, so the
    halt that stops on a repeated signature saw 384 different signatures and never fired.
    """
    rnd = random.Random(384)
    names = string.ascii_lowercase + string.digits + "_"
    messages = []
    for attempt in range(384):
        temp_dir = rnd.choice(
            [
                f"/tmp/tmp{''.join(rnd.choices(names, k=8))}",
                f"/tmp/pytest-of-root/pytest-{attempt}/test_denied_write{attempt % 3}",
                f"/var/folders/{''.join(rnd.choices(names, k=2))}/{''.join(rnd.choices(names, k=30))}/T/"
                f"failres-wt-{''.join(rnd.choices(names, k=8))}",
            ]
        )
        stamp = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc) + timedelta(seconds=4 * attempt)
        messages.append(
            f"{stamp.isoformat()} permission denied (pid {1000 + attempt}): write outside scope: "
            f"{temp_dir}/worktree/src/dates.py after {rnd.randint(1, 999)}ms"
        )
    signatures = {signature("fixer-scope-violation", message) for message in messages}
    assert signatures == {
        "fixer-scope-violation|<ts> permission denied (pid <n>): write outside scope: <tmp>/worktree/src/dates.py after <dur>"
    }


# ── properties ────────────────────────────────────────────────────────────────

_FRAGMENTS = st.sampled_from(
    ["/tmp/", "/home/alice/", "/usr/lib/", "pytest-of-root/", ":", "12", "0x", "7f3a2b1c4d5e", "2026-11-30",
     "T", "03:27:40", " ", "\n", ".", "s", "ms", "pid ", "port ", "line ", "(", ")", ",", "[", "]", "<", ">",
     "a.py", "localhost", "@", "//", "\\", "C:", "Users", "-", "_", "=", "[REDACTED:jwt]", "Nov 30 ",
     "1796009260", "AppData\\Local\\Temp\\", "/var/folders/", "x0", "é"]
)
_MIXED_TEXT = st.lists(_FRAGMENTS | st.text(max_size=10), max_size=20).map("".join)


@settings(deadline=None, max_examples=300)
@given(st.text() | _MIXED_TEXT)
def test_normalise_is_idempotent(text):
    once = normalise(text)
    assert normalise(once) == once


@settings(deadline=None)
@given(st.text() | _MIXED_TEXT)
def test_signature_never_raises_and_is_one_line(text):
    result = signature("unknown", text)
    assert result.splitlines() == [result]


_TEMPLATE = "gate red: {} while writing src/dates.py"
_HEX = "0123456789abcdef"


def _datetimes():
    return st.datetimes(min_value=datetime(2001, 9, 10), max_value=datetime(2286, 1, 1))


_TIMESTAMPS = st.one_of(
    _datetimes().map(lambda d: d.isoformat()),
    _datetimes().map(lambda d: d.replace(tzinfo=timezone.utc).isoformat()),
    _datetimes().map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S")),
    _datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
    _datetimes().map(lambda d: d.strftime("%b %d %H:%M:%S")),
    st.integers(10**9, 10**10 - 1).map(str),
    st.integers(10**12, 10**13 - 1).map(str),
)
_TEMP_DIRS = st.one_of(
    st.text(alphabet=string.ascii_lowercase + string.digits + "_", min_size=8, max_size=8).map(lambda s: f"/tmp/tmp{s}"),
    st.tuples(st.integers(0, 10**4), st.integers(0, 9)).map(lambda t: f"/tmp/pytest-of-ci/pytest-{t[0]}/test_write{t[1]}"),
)
_HEX_IDS = st.text(alphabet=_HEX, min_size=7, max_size=64).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)


@settings(deadline=None)
@given(_TIMESTAMPS, _TIMESTAMPS)
def test_same_template_with_different_timestamps_has_one_signature(one, other):
    assert signature("unknown", _TEMPLATE.format(one)) == signature("unknown", _TEMPLATE.format(other))


@settings(deadline=None)
@given(_TEMP_DIRS, _TEMP_DIRS)
def test_same_template_with_different_temp_dirs_has_one_signature(one, other):
    assert signature("unknown", _TEMPLATE.format(f"{one}/x.py")) == signature("unknown", _TEMPLATE.format(f"{other}/x.py"))


@settings(deadline=None)
@given(st.integers(1, 4_194_304), st.integers(1, 4_194_304))
def test_same_template_with_different_pids_has_one_signature(one, other):
    assert signature("unknown", _TEMPLATE.format(f"pid {one}")) == signature("unknown", _TEMPLATE.format(f"pid {other}"))


@settings(deadline=None)
@given(_HEX_IDS | st.uuids().map(str), _HEX_IDS | st.uuids().map(str))
def test_same_template_with_different_hex_ids_has_one_signature(one, other):
    assert signature("unknown", _TEMPLATE.format(one)) == signature("unknown", _TEMPLATE.format(other))


# ── the size of a test suite ─────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("=== 1 failed, 276 passed in 3.21s ===", "=== 1 failed, 277 passed in 3.30s ==="),
        ("1 failed, 276 passed, 2 warnings", "1 failed, 280 passed, 3 warnings"),
        ("Tests:       1 failed, 276 passed, 277 total", "Tests:       1 failed, 277 passed, 278 total"),
        ("test result: FAILED. 276 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s",
         "test result: FAILED. 277 passed; 1 failed; 1 ignored; 0 measured; 2 filtered out; finished in 0.61s"),
        ("DONE 277 tests, 1 skipped, 2 failures in 1.2s", "DONE 278 tests, 2 skipped, 2 failures in 1.3s"),
        ("Ran 277 tests in 0.5s", "Ran 278 tests in 0.6s"),
        ("FAILED (failures=1, skipped=3)", "FAILED (failures=1, skipped=4)"),
        ("276 passing (3s)", "277 passing (3s)"),
        ("Tests: 277, Assertions: 500, Failures: 1.", "Tests: 278, Assertions: 503, Failures: 1."),
    ],
)
def test_one_more_test_in_the_suite_leaves_the_signature_as_it_was(one, other):
    assert signature("gate-not-green-after-fixer", one) == signature("gate-not-green-after-fixer", other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("=== 1 failed, 276 passed in 3.21s ===", "=== 2 failed, 276 passed in 3.21s ==="),
        ("Tests:       1 failed, 276 passed, 277 total", "Tests:       2 failed, 275 passed, 277 total"),
        ("test result: FAILED. 276 passed; 1 failed; 0 ignored", "test result: FAILED. 276 passed; 2 failed; 0 ignored"),
        ("FAILED (failures=1, errors=0)", "FAILED (failures=1, errors=2)"),
    ],
)
def test_how_many_tests_failed_still_tells_failures_apart(one, other):
    assert signature("unknown", one) != signature("unknown", other)


def test_a_signature_stored_before_counts_were_normalised_compares_equal_in_its_current_form():
    from lessons.recall.signature import current_form

    stored = "gate-not-green-after-fixer|1 failed, 276 passed in <dur>"  # as older versions wrote it
    fresh = signature("gate-not-green-after-fixer", "1 failed, 277 passed in 2.5s")
    assert stored != fresh and current_form(stored) == fresh
    assert current_form(fresh) == fresh


def test_a_coloured_line_has_the_signature_of_the_same_line_uncoloured():
    """`ESC[31m` is formatting: neither a duration (`31m`) nor a part of the failure."""
    coloured = "\x1b[31mFAILED tests/test_a.py::test_b\x1b[0m\x1b[31;1m 1 failed\x1b[0m\x1b[31m in 0.03s\x1b[0m"
    assert signature("gate-not-green-after-fixer", coloured) == signature(
        "gate-not-green-after-fixer", "FAILED tests/test_a.py::test_b 1 failed in 0.03s")


def test_every_rule_but_the_marker_starts_only_after_no_letter_or_digit() -> None:
    """Stage one refuses a position inside a word once, before trying any rule (the premise:
    each rule says so in its own lookbehind, and a marker starts with `[`)."""
    from lessons.recall import signature as module

    starts = (r"(?<![0-9A-Za-z])", r"(?<![\w.])", r"(?<![\w.:])", r"(?<![\w])", module._PATH_START)
    for name, pattern in module._STAGE_ONE_RULES:
        if name == "marker":
            assert pattern.startswith(r"\[")
            continue
        branches = [pattern] if name != "duration" else pattern.split("|(?<!")
        branches = [b if b.startswith("(?<") else "(?<!" + b for b in branches]
        assert all(branch.startswith(starts) for branch in branches), name


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "0", "7", "f", ":", "/", ".", " ", "-", "_", "[", "]", "x", "pid ",
                                 "line ", "12:30:45", "2030-01-02", "/tmp/", "/home/u/", "0x7f3a0000beef",
                                 "deadbeef1", "3 passed", "Ran 4", "5ms", "C:\\", "[REDACTED:x]", "(3,4)"]),
                max_size=14).map("".join))
def test_stage_one_with_its_guard_matches_what_the_rules_alone_match(text: str) -> None:
    import re

    from lessons.recall import signature as module

    unguarded = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in module._STAGE_ONE_RULES))
    assert module._stage_one().sub(module._replace_stage_one, text) == unguarded.sub(module._replace_stage_one, text)
