"""Redaction's fast paths find every secret the full pattern set finds.

Redaction runs only the shapes a text can hold (`lessons.redaction.secret_gates`), remembers the texts
it has judged, and an import writes its batches through `git fast-import`. Each is a place a
secret could slip through; these tests put the canaries where such a shortcut would miss them
(the end of a long line, a name spelt with punctuation, the non-ASCII letters
`re.IGNORECASE` matches, either side of a batch boundary) and compare with every shape run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import git
from lessons.storage import bulk
from lessons.redaction import known_secrets, redact
from lessons.recall.importer import import_lessons
from lessons.redaction.secret_gates import candidates
from lessons.redaction.secret_shapes import PATTERNS
from lessons.storage.store import Store
from test_no_secrets import everything_git_holds, load_canaries, load_lookalikes

# The letters Python's case-insensitive matching takes for ASCII ones.
_LOOKALIKE_LETTERS = (("i", "\u0131"), ("I", "\u0130"), ("s", "\u017f"), ("k", "\u212a"), ("K", "\u212a"))


def every_shape(text: str) -> list:
    return list(enumerate(PATTERNS))


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """(findings with the gates, findings with every shape run)."""
    gated = redact.find_secrets(text)
    with monkeypatch.context() as m:
        m.setattr(redact, "candidates", every_shape)
        full = redact.find_secrets(text)
    return gated, full


def texts() -> list[str]:
    canaries = [c.text for c in load_canaries()]
    return canaries + load_lookalikes()


def test_the_gates_find_what_every_shape_finds_in_the_corpora(monkeypatch) -> None:
    for text in texts():
        gated, full = both_ways(text, monkeypatch)
        assert gated == full, text


def test_the_gates_find_what_every_shape_finds_with_lookalike_letters(monkeypatch) -> None:
    compared = 0
    for text in texts():
        for ascii_letter, other in _LOOKALIKE_LETTERS:
            if ascii_letter in text:
                variant = text.replace(ascii_letter, other)
                gated, full = both_ways(variant, monkeypatch)
                assert gated == full, variant
                compared += 1
    assert compared > 100


@pytest.mark.parametrize("text", [
    "Authorızation: Bearer 9fQ2xLr7TzW4mK8pVb3N",  # dotless i: (?i) matches it as an i
    "AUTHORİZATION: token 9fQ2xLr7TzW4mK8pVb3N",  # dotted capital I
    "DefaultEndpointsProtocol=https;Account\u212aey=9fQ2xLr7TzW4mK8pVb3N9fQ2xLr7TzW4mK8p==",  # Kelvin sign
    "x-api-\u212aey: 9fQ2xLr7TzW4mK8pVb3N",
    "pa_ss.word=hunter2",  # a credential's name spelt with punctuation
    "TO-KEN: 9fQ2xLr7TzW4mK8pVb3N",
    "--pass_word hunter2",
])
def test_a_secret_the_full_set_finds_is_found_through_the_gates(text, monkeypatch) -> None:
    gated, full = both_ways(text, monkeypatch)
    assert full, "the full pattern set should find a secret here"
    assert gated == full


def test_a_secret_at_the_end_of_a_long_line_is_redacted(monkeypatch) -> None:
    prefix = "INFO step ok; " * 20_000  # far past every cache and memo limit
    for canary in load_canaries():
        text = prefix + canary.text
        assert canary.secret not in redact.redact(text), canary.marker
    gated, full = both_ways(prefix + "then password=hunter2", monkeypatch)
    assert gated == full and gated


def test_a_value_remembered_after_a_text_was_judged_clean_is_redacted_from_it(monkeypatch) -> None:
    monkeypatch.setattr(known_secrets, "_values", frozenset())
    text = "the gate read DB_URL and connected with correct-horse-battery-staple"
    assert redact.redact(text) == text
    assert redact.redact(text) == text  # now remembered as judged
    known_secrets.remember_secret_values(["correct-horse-battery-staple"])
    assert "correct-horse-battery-staple" not in redact.redact(text)
    assert known_secrets.MARKER in redact.redact(text)


def test_redacting_what_redaction_returned_changes_nothing() -> None:
    for text in texts():
        once = redact.redact(text)
        assert redact.redact(once) == once, text


@pytest.mark.parametrize("fast", [True, False])
def test_secrets_either_side_of_a_batch_boundary_never_reach_the_store(repo: Path, monkeypatch, fast) -> None:
    monkeypatch.setattr(bulk, "MIN_BULK_FILES", 1 if fast else 10**9)
    canaries = load_canaries()
    store = Store(repo)
    source = repo.parent / "lessons.jsonl"
    lines = []
    for n in range(len(canaries) + 10):
        message = canaries[n % len(canaries)].text if n % 3 else f"check {n} failed"
        lines.append(json.dumps({"ts": "2030-01-02T03:04:05Z", "slug": "s", "task": f"t{n}",
                                 "failClass": "gate-not-green-after-fixer", "message": message}))
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_lessons(store, [source], batch_size=10)
    assert result.imported == len(lines) and len(result.commits) == -(-len(lines) // 10)
    held = everything_git_holds(repo)
    for canary in canaries:
        assert canary.secret not in held, canary.marker
    assert git(repo, "for-each-ref", "refs/failres/bulk").strip() == ""


def test_an_import_through_fast_import_writes_the_commits_an_ordinary_one_does(tmp_path, monkeypatch) -> None:
    tops = []
    for fast in (True, False):
        monkeypatch.setattr(bulk, "MIN_BULK_FILES", 1 if fast else 10**9)
        top = tmp_path / ("fast" if fast else "plain")
        top.mkdir()
        git(top, "init", "-q", "-b", "main")
        store = Store(top)
        store.create()
        source = tmp_path / "lessons.jsonl"
        source.write_text("".join(json.dumps({"ts": "2030-01-02T03:04:05Z", "slug": "s", "task": f"t{n}",
                                              "failClass": "c", "message": f"m{n}"}) + "\n" for n in range(120)))
        import_lessons(store, [source], batch_size=50)
        tops.append(top)
    trees = [git(top, "log", "--format=%T %B", "refs/failres/store") for top in tops]
    assert trees[0] == trees[1]
    assert int(git(tops[0], "rev-list", "--count", "refs/failres/store")) == 4  # the root and three batches
    git(tops[0], "fsck", "--strict", "--no-dangling")


def test_record_bytes_are_those_json_dumps_writes() -> None:
    from lessons.storage.records import encode

    documents = [
        {"id": "0123456789abcdef", "message": "ünïcödé \u2028 \x00 \"q\" \\ \t\n😀", "n": 3, "f": 1.5,
         "none": None, "yes": True, "no": False, "empty": [], "map": {}, "big": 10**30,
         "nested": {"b": [1, [2, {"z": "y", "a": None}]], "a": ()}, "floats": [1e-9, 3.0, float("inf")]},
        {"k" + str(n): [str(n)] * (n % 3) for n in range(12)},
    ]
    for document in documents:
        expected = (json.dumps(redact.redact_value(document), sort_keys=True, indent=2, ensure_ascii=False)
                    + "\n").encode()
        assert encode(document) == expected


def test_a_known_value_is_found_with_invisible_characters_between_its_letters(monkeypatch) -> None:
    """A seat that prints a known value with a zero-width space (or a soft hyphen, a direction
    mark) between its letters shows a terminal the same value: it is redacted all the same."""
    monkeypatch.setattr(known_secrets, "_values", frozenset())
    known_secrets.remember_secret_values(["pa55-w0rd-known"])
    for gap in ("\u200b", "\u200d", "\u00ad", "\u2066", "\ufeff"):
        spread = gap.join("pa55-w0rd-known")
        out = redact.redact(f"the value is {spread}.")
        assert out == f"the value is {known_secrets.MARKER}.", repr(gap)
    assert redact.redact("pa55 w0rd known") == "pa55 w0rd known"  # other letters between: another text


def field_by_field(record: dict) -> dict:
    """`redact_value` of a record without the whole-record proof: each field judged alone."""
    return {key: redact._redact_field(key, item) for key, item in record.items()}


def test_a_record_redacted_whole_is_the_record_redacted_field_by_field(monkeypatch) -> None:
    """The whole-record shortcut (no shape can match the fields joined, so none matches one)
    returns what redacting each field does, for records built from every corpus text."""
    monkeypatch.setattr(known_secrets, "_values", frozenset())
    corpus = texts()
    shortcut = 0
    for n, text in enumerate(corpus):
        for record in ({"message": text, "slug": "s", "n": n},
                       {"a": corpus[(n + 1) % len(corpus)][:n % 40], "b": text[n % 7:], "c": [text[:5], "x"]},
                       {"ts": "2030-01-01T00:00:00.000000Z", "id": f"{n:016x}", "message": f"plain line {n}",
                        "resolved_by": None, "package": text[-(n % 9):] if n % 9 else ""}):
            redact.forget_judged()
            assert redact.redact_value(record) == field_by_field(record), record
            shortcut += redact._unchanged_record(record) is not None
    assert shortcut > 100  # the shortcut itself was taken, not only the field-by-field way


_GATE_WORDS = ("-", ":", "=", "gh", "gl", "sk-", "-p", "-u", "key", "pass", "token", "aws", "secret", "://",
               "eyJ", "AIza", "xox", "SG.", "hf_", "npm_", "_live_", "a1B2c3D4e5F6g7H8i9J0", "Aa0" * 14, " ")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_GATE_WORDS), max_size=6).map("".join), min_size=1, max_size=5))
def test_no_shape_can_match_a_field_when_none_can_match_the_fields_joined(fields) -> None:
    """The premise of the shortcut: the gates of the joined text are a superset of each field's."""
    joined = candidates("\n".join(fields))
    for field in fields:
        assert set(candidates(field)) <= set(joined), field


def test_a_record_with_a_remembered_value_is_judged_field_by_field(monkeypatch) -> None:
    monkeypatch.setattr(known_secrets, "_values", frozenset())
    known_secrets.remember_secret_values(["plain-looking-value"])
    record = {"message": "it was plain-looking-value", "slug": "s"}
    assert redact._unchanged_record(record) is None
    assert redact.redact_value(record)["message"] == f"it was {known_secrets.MARKER}"


def test_flat_records_are_written_as_json_dumps_writes_them() -> None:
    from lessons.storage.records import encode

    for document in ({"id": "0123456789abcdef", "z": "a,\n  b", "m": "ünï \u2028 \"q\" \\", "n": -3, "f": 1e-9,
                      "nan": float("nan"), "inf": float("-inf"), "t": True, "none": None},
                     {"only": ""}):
        expected = (json.dumps(redact.redact_value(document), sort_keys=True, indent=2, ensure_ascii=False)
                    + "\n").encode()
        assert encode(document) == expected
