"""What a correction gives a later agent (`followups.gives_rule`), and the words about
asking that carry a correction's markers without correcting (`lessons.learning.asking`):
each a category of language, tested in several languages, with what must still count."""

from __future__ import annotations

import pytest

from lessons.learning import directives
from lessons.learning.asking import asks_advice, is_about_asking, is_question
from lessons.learning.followups import Followup, classify_followup, directive, gives_rule


@pytest.mark.parametrize("words", [
    "The date format is wrong.",
    "this is completely wrong",
    "这边好像弄错了",
    "这个配置不对",
    "Das ist falsch.",
    "Esto está mal.",
    "Это неправильно.",
    "Bu yanlış.",
    "その設定は違う。",
    "No, that's wrong.",
    "No funciona el botón de guardar.",  # the "No" is the report's own negation, no "no,"
    "No, it still fails on the second run.",
])
def test_a_verdict_on_the_work_corrects_the_agent_but_gives_no_rule(words: str) -> None:
    assert classify_followup(words, "I changed the date format.") is Followup.CORRECTION
    assert not gives_rule(words)


@pytest.mark.parametrize(("words", "wanted"), [
    ("The date format is wrong, it should be ISO 8601.", "The date format is wrong, it should be ISO 8601."),
    ("No, the tests go in tests/unit.", "the tests go in tests/unit."),
    ("Nein, nimm die Konfiguration aus der Umgebung.", "nimm die Konfiguration aus der Umgebung."),
    ("That's wrong: use pathlib instead of os.path.", "That's wrong: use pathlib instead of os.path."),
])
def test_a_verdict_with_what_to_do_instead_gives_that_rule(words: str, wanted: str) -> None:
    assert classify_followup(words, "Done.") is Followup.CORRECTION
    assert gives_rule(words)
    assert directive(words) == wanted


def test_a_repeated_no_followed_by_what_to_do_gives_a_rule() -> None:
    words = "不对不对，你先看一下官方文档"
    assert classify_followup(words, "这里不需要 Multicast。") is Followup.CORRECTION
    assert gives_rule(words)


@pytest.mark.parametrize("words", [
    "Why did you delete the migration?",
    "why did you change the port",
    "Shouldn't the tests be in tests/unit?",
    "¿Por qué usaste os.path en vez de pathlib?",
    "Почему ты взял os.path вместо pathlib?",
    "为什么要改回去？",
])
def test_a_question_that_pushes_back_corrects_but_gives_no_rule(words: str) -> None:
    assert classify_followup(words, "I moved the helper.") is Followup.CORRECTION
    assert not gives_rule(words)


@pytest.mark.parametrize("words", [
    "how should I write the path here?",
    "What should the default timeout be?",
    "Where should the fixtures live?",
    "这边PatchPath应该怎么写呢",
    "这个参数应该用什么类型",
    "¿Cómo debería llamarse este módulo?",
    "Wie sollte ich das Modul nennen?",
    "Comment devrait-on nommer ce fichier ?",
    "Как должен называться этот файл?",
    "Bu dosyanın adı ne olmalı?",
    "この関数はどう書くべき？",
])
def test_a_question_asking_how_something_should_be_asks_for_advice(words: str) -> None:
    assert asks_advice(words)
    assert classify_followup(words, "I added the loader.") is Followup.REQUEST


@pytest.mark.parametrize("words", [
    "Why should the tests be in tests/unit? They should be next to the module.",
    "The config should be read from the environment, not from a file.",
    "这个文件应该放在src下面",
])
def test_a_should_that_says_how_it_must_be_still_corrects(words: str) -> None:
    assert classify_followup(words, "I put it in the root.") is Followup.CORRECTION


@pytest.mark.parametrize("words", [
    "Add an export page with CSV and JSON, don't stop to ask me.",
    "Write the migration for the new table and run it, without asking me for confirmation.",
    "实现导出功能，支持CSV和JSON，不要停下来问我",
    "エクスポート機能を実装して、確認は不要です",
    "Implementa la página de exportación sin preguntarme.",
    "Schreib die Migration für die neue Tabelle, ohne zu fragen.",
    "Реализуй экспорт в CSV, не спрашивай.",
])
def test_an_instruction_not_to_stop_and_ask_closing_a_new_task_is_part_of_the_task(words: str) -> None:
    assert is_about_asking(words)
    assert classify_followup(words, "I finished the import page; the tests pass.") is Followup.REQUEST


@pytest.mark.parametrize("words", [
    "Add the export page now and the import page after it, and don't stop to ask me.",
    "可以，后续的步骤你自动完成，无需询问，决策都采用你认为最好的方案，测试通过就可以了，然后提交，最后写一份总结",
    "Sí, sigue con los pasos que faltan, no me preguntes cada vez y no hagas pausas.",
])
def test_an_instruction_not_to_ask_after_an_agent_that_asked_corrects_the_asking(words: str) -> None:
    assert classify_followup(words, "Step two is done. Shall I go on with step three?") is Followup.CORRECTION
    assert gives_rule(words)


def test_an_instruction_not_to_ask_alone_still_corrects_an_agent_that_stopped() -> None:
    """Without a new task beside it, "don't stop to ask me" is said of how the agent works."""
    assert classify_followup("Don't stop to ask me.", "Step two is done.") is Followup.CORRECTION
    assert classify_followup("Continue, don't stop to ask me.", "Step two is done.") is Followup.CORRECTION


def test_a_new_task_that_also_corrects_stays_a_correction() -> None:
    """Only when asking is the whole correction does the new task make it a request."""
    words = "Add the export page, don't stop to ask me, and use pathlib instead of os.path."
    assert classify_followup(words, "I finished the import page.") is Followup.CORRECTION


@pytest.mark.parametrize(("sentence", "asks"), [
    ("Is this right?", True),
    ("这个是怎么实现的呢", True),
    ("不要では", True),
    ("Why did you remove it", True),
    ("Use the cached value.", False),
    ("不要删除这个文件", False),
    ("Porque no quiero dependencias nuevas, usa la biblioteca estándar en vez de requests.", False),
    ("Por qué borraste el archivo", True),
])
def test_a_question_is_told_by_its_mark_its_closing_particle_or_an_opening_why(sentence: str, asks: bool) -> None:
    assert is_question(sentence) is asks


def test_a_lists_number_stays_with_its_item_so_a_numbered_correction_is_in_the_opening() -> None:
    """ "1." ends in a full stop but is no sentence: counted as one it pushed the correction
    out of a prompt's opening."""
    words = ("A small fix first:\n1. Use pathlib instead of os.path in loader.py.\n2. Keep the public names.\n"
             "3. Run the tests after it.")
    assert directives.sentences(words)[:2] == ["A small fix first:", "1. Use pathlib instead of os.path in loader.py."]
    assert classify_followup(words, "I rewrote the loader.") is Followup.CORRECTION
    assert directive(words) == "1. Use pathlib instead of os.path in loader.py."
