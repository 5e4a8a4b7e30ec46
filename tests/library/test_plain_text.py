"""A terminal's output kept as the plain text it shows: escapes go whole, controls go, text stays."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lessons.terminal import has_terminal_controls, plain_text

CONTROLS = {chr(code) for code in (*range(0x20), *range(0x7F, 0xA0))} - {"\n", "\t"}


def test_colours_and_styles_of_a_pytest_line_go_whole():
    line = "\x1b[1m\x1b[31mE       assert add(2, 2) == 4\x1b[0m\n\x1b[31m\x1b[1m1 failed\x1b[0m\x1b[31m in 0.01s\x1b[0m\n"
    assert plain_text(line) == "E       assert add(2, 2) == 4\n1 failed in 0.01s\n"


def test_a_hyperlink_keeps_its_visible_text_and_a_title_goes():
    link = "see \x1b]8;;https://example.invalid/x\x1b\\the docs\x1b]8;;\x1b\\ and \x1b]0;a title\x07done"
    assert plain_text(link) == "see the docs and done"


def test_two_byte_escapes_and_one_byte_csi_go():
    assert plain_text("a\x1b(Bb\x1b=c\x1b7d\x9b31me") == "abcde"


def test_an_unterminated_string_takes_its_line_only():
    assert plain_text("ok \x1b]0;never ends\nnext line\n") == "ok \nnext line\n"


def test_a_sequence_cut_off_at_the_end_leaves_nothing_behind():
    assert plain_text("cut here \x1b[38;5") == "cut here "


def test_a_line_redrawn_with_carriage_returns_shows_its_last_state_and_crlf_is_a_line_break():
    assert plain_text("50%\r100%\r\nnext\r\n\rlast\r") == "100%\nnext\nlast"


def test_other_controls_go_and_newline_tab_and_ordinary_text_stay():
    assert plain_text("a\x00b\x07c\x08d\x7fe\x85f\tg\nh") == "abcdef\tg\nh"
    assert plain_text("naïve — 100% [ok] ~ {x}") == "naïve — 100% [ok] ~ {x}"


@given(st.text(alphabet=st.sampled_from("ab[];0123456789m\x1b\x07\x9b\x9d\x9c\\\r\n\t\x00\x7f"), max_size=80))
def test_what_comes_out_holds_no_control_and_comes_out_the_same_again(text):
    plain = plain_text(text)
    assert not CONTROLS & set(plain)
    assert not has_terminal_controls(plain)
    assert plain_text(plain) == plain
