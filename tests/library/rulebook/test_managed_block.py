"""The managed block in a person's agent file: only its lines change, byte for byte, and no
rule text can end it early, open a comment over what follows, or drive a terminal."""

from __future__ import annotations

import pytest

from lessons.errors import InvalidInput
from lessons.rulebook.managed_block import BEGIN_MARKER, END_MARKER, splice_block
from lessons.rulebook.rules import Rule, render_rules_block

BEGIN, END = BEGIN_MARKER.encode(), END_MARKER.encode()


def block(*texts: str) -> str:
    return render_rules_block([("behavior", [Rule(t) for t in texts], [])])


def between(data: bytes) -> bytes:
    """The bytes from the begin marker to the end marker, both included."""
    return data[data.index(BEGIN):data.index(END) + len(END)]


def outside(data: bytes) -> tuple[bytes, bytes]:
    return data[:data.index(BEGIN)], data[data.index(END) + len(END):]


def test_no_file_yet_is_the_block_alone() -> None:
    made = splice_block(None, block("Run the tests first."))
    assert made.startswith(BEGIN + b"\n") and made.endswith(END + b"\n")
    assert b"\n- Run the tests first.\n" in made and b"\r" not in made


def test_a_file_without_a_block_keeps_every_byte_and_gets_the_block_after_a_blank_line() -> None:
    person = b"# Project\n\nUse tabs.\n"
    made = splice_block(person, block("A."))
    assert made.startswith(person + b"\n" + BEGIN)
    assert made.endswith(END + b"\n")


def test_a_file_without_a_final_newline_is_only_extended_never_rewritten() -> None:
    person = b"# Project\nlast line without newline"
    made = splice_block(person, block("A."))
    assert made.startswith(person + b"\n\n" + BEGIN)


def test_a_hand_edit_outside_the_block_survives_a_new_export_byte_for_byte() -> None:
    first = splice_block(b"intro\n", block("A."))
    head, tail = outside(first)
    edited = b"# edited\xff by hand (not UTF-8)\n" + head + between(first) + tail + b"notes after\n\ttabbed   \n"
    again = splice_block(edited, block("A.", "B."))
    assert outside(again) == outside(edited)
    assert b"- B." in between(again) and b"- B." not in between(edited)


def test_the_end_markers_own_ending_is_kept_even_when_the_file_ends_without_a_newline() -> None:
    made = splice_block(b"top\n", block("A."))
    person = made.rstrip(b"\n")  # the person deleted the final newline
    again = splice_block(person, block("B."))
    assert again.endswith(END) and again.startswith(b"top\n\n" + BEGIN)


def test_a_crlf_file_gets_a_crlf_block_and_keeps_its_own_lines() -> None:
    person = b"# Project\r\nUse tabs.\r\n"
    made = splice_block(person, block("A.", "B."))
    assert made.startswith(person + b"\r\n" + BEGIN + b"\r\n")
    assert made.count(b"\n") == made.count(b"\r\n")
    again = splice_block(made + b"after\r\n", block("C."))
    assert again.count(b"\n") == again.count(b"\r\n") and again.endswith(END + b"\r\nafter\r\n")


def test_the_same_rules_give_the_same_bytes() -> None:
    made = splice_block(b"x\n", block("A."))
    assert splice_block(made, block("A.")) == made


def test_an_empty_rule_set_empties_the_block_and_keeps_its_markers() -> None:
    made = splice_block(b"x\n", block("A."))
    emptied = splice_block(made, "")
    assert b"- A." not in emptied and between(emptied).count(b"\n") == 2  # begin, the managed note, end
    assert outside(emptied) == outside(made)


@pytest.mark.parametrize("text", [
    END_MARKER, f"x\n{END_MARKER}\n{BEGIN_MARKER}", "<!-- everything below is hidden", "evil --> <!--",
    "clear \x1b[2J\x1b[H the screen\x00\x07", "reorder \u202e\u2066 this", "form\x0cfeed\x0bvertical\x85next",
])
def test_a_rule_text_cannot_break_out_of_the_block(text: str) -> None:
    person = b"before\n"
    made = splice_block(person, block(text, "Last."))
    assert made.count(BEGIN) == 1 and made.count(END) == 1
    inside = between(made)[len(BEGIN):-len(END)]
    assert b"<!--" not in inside.replace(b"<!-- Managed by failres", b"") and b"-->" not in inside.split(b"\n", 2)[2]
    assert not any(byte < 0x20 and byte not in (0x0a,) for byte in inside)
    assert "\u202e" not in made.decode() and "\u2066" not in made.decode()
    # The next export still finds exactly this block, and replaces it whole.
    again = splice_block(made + b"after\n", block("Only."))
    assert again == person + b"\n" + between(splice_block(None, block("Only."))) + b"\nafter\n"


@pytest.mark.parametrize("person", [
    b"a\n" + BEGIN + b"\nb\n" + BEGIN + b"\n" + END + b"\n",
    b"a\n" + BEGIN + b"\n" + END + b"\n" + END + b"\n",
    b"a\n" + BEGIN + b"\nno end\n",
    b"a\n" + END + b"\nno begin\n",
    b"a\n" + END + b"\n" + BEGIN + b"\n",
], ids=["two-begins", "two-ends", "begin-alone", "end-alone", "end-before-begin"])
def test_markers_that_do_not_pair_are_refused(person: bytes) -> None:
    with pytest.raises(InvalidInput, match="AGENTS.md has"):
        splice_block(person, block("A."), "AGENTS.md")


def test_a_marker_inside_a_line_of_prose_is_not_a_marker() -> None:
    person = f"see `{BEGIN_MARKER}` for how failres writes here\n".encode()
    made = splice_block(person, block("A."))
    assert made.startswith(person + b"\n" + BEGIN)
