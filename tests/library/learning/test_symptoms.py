"""Corrections said without a word of correction (`lessons.learning.symptoms`): a report
that the work is broken, that it is not needed, or a doubt put as a negative question,
each a rule of language tested in several languages, with what must not be read as one."""

from __future__ import annotations

import pytest

from lessons.learning.followups import Followup, classify_followup, directive
from lessons.learning.symptoms import answers_back, reports_breakage, says_unneeded_or_doubts


@pytest.mark.parametrize("sentence", [
    "The new route doesn't work in production.",
    "the timeout setting is not applied",
    "I clicked save and nothing happens",
    "the spinner is still there after the upload",
    "Same error as before when I run make.",
    "Even though I turned the flag off, the banner shows.",
    "El botón no funciona en el móvil.",
    "Der Export funktioniert immer noch nicht.",
    "Le formulaire ne fonctionne pas.",
    "Кнопка не работает после перезагрузки.",
    "Kaydet düğmesi çalışmıyor.",
    "ログイン画面が表示されない。",
    "设置之后没有生效",
    "旧的进程一直还在",
    "After the update the script tries to install node again.",
    "El instalador intenta descargar el paquete otra vez.",
    "Das Skript versucht die Datenbank erneut anzulegen.",
    "Скрипт снова пытается создать базу.",
    "インストール済みなのに、再度インストールしようとする",
    "启动时又重新安装了一遍依赖",
    "There is a typo in your migration, the column name is misspelled.",
    "Il y a une petite erreur dans ton script de déploiement.",
    "Hay un error en tu función de login.",
    "Da ist ein Fehler in deinem Patch.",
    "I'm getting a 500 error on the settings page.",
    "I tried to deploy it but got hit with a permission error.",
    "We ran the migration and then got an exception on startup.",
    "J'ai une erreur 500 sur la page de contact.",
    "J'ai toujours cette erreur au démarrage.",
    "Sigo teniendo el mismo error con el token.",
    "The worker crashed again at midnight.",
    "Le serveur plante au démarrage.",
    "Die App stürzt beim Speichern ab.",
    "Приложение падает при запуске.",
    "The header is now duplicated on every page.",
    "Le menu est en double dans le header.",
    "El pie de página está duplicado.",
])
def test_a_report_that_the_work_is_broken_is_recognised_in_each_language(sentence: str) -> None:
    assert reports_breakage(sentence)


@pytest.mark.parametrize("sentence", [
    "Don't run the migrations.",  # a negated imperative is a directive, not a report
    "Add a check that the file does not exist yet.",
    "It works now, thanks.",
    "Kullanıcı adı görünsün istemiyorum.",  # "I don't want": a wish for the new work
    "失敗しないように、先にバックアップを取って。",  # "so that it does not fail"
    "When I add these two lines to main.py the build doesn't work.",  # the person's own change
    "Please add a retry, even though it should rarely fail.",  # a concession inside a request
    "Use the same error type as in parser.py.",  # the same kind of thing, no failure back
    "Bunu nasıl yapacağımı bilmiyorum, bir örnek yazar mısın?",  # "I don't know how": the person's state
    "Try to install the package again with --force.",  # an imperative "again" is the next request
    "Run the migration again on staging.",
    "Fix the crash in the importer.",  # a crash named as the task, not reported of the last work
    "Add a plant to the garden page.",
    "Une plante verte sur la page d'accueil, s'il te plaît.",
    "Remove the duplicated helper in utils.py.",
    "Log an error when the token is missing.",
    "I want to see an error when the token is missing.",
    "I would like the form to show an error and then get a retry button.",
])
def test_a_negation_that_reports_nothing_broken_is_no_breakage(sentence: str) -> None:
    assert not reports_breakage(sentence)


@pytest.mark.parametrize("sentence", [
    "ignore the lint warnings",
    "No need to write a migration for this.",
    "不需要再问我了",
    "Bunun için yeni bir dosyaya gerek yok.",
    "Don't we already have a retry helper?",
    "do we not have a config loader for this",
    "これ、もう設定してない？",
])
def test_unneeded_work_and_a_negative_question_are_recognised(sentence: str) -> None:
    assert says_unneeded_or_doubts(sentence)


@pytest.mark.parametrize("sentence", ["Do we have a retry helper?", "Did you push?", "不用谢", "ignored files stay out"])
def test_a_plain_question_or_thanks_is_no_doubt(sentence: str) -> None:
    assert not says_unneeded_or_doubts(sentence)


def test_a_turn_opening_but_i_answers_the_agents_account() -> None:
    assert answers_back("But I already set the variable in .env")
    assert answers_back("可是我已经改过配置了")
    assert not answers_back("But first, add the tests")


def test_a_breakage_reported_deep_in_a_long_prompt_still_corrects_and_is_the_directive() -> None:
    """A "do NOT" deep in a prompt is the new task's constraint; a failure is news about the
    last one, wherever it stands."""
    words = ("Let's go on with the editor. Add bold and italic buttons to the toolbar, with keyboard shortcuts "
             "for both. Keep the toolbar icons the same size as the others. The zoom slider you added "
             "does not work on the second tab. Do not add a dependency for this.")
    assert classify_followup(words, "Done: the zoom slider is in.") is Followup.CORRECTION
    assert directive(words) == "The zoom slider you added does not work on the second tab."


def test_a_do_not_deep_in_a_long_prompt_is_still_no_correction() -> None:
    words = ("Let's go on with the editor. Add bold and italic buttons to the toolbar, with keyboard shortcuts "
             "for both. Keep the toolbar icons the same size as the others. Do not add a dependency.")
    assert classify_followup(words, "Done: the zoom slider is in.") is Followup.REQUEST


def test_a_short_report_of_breakage_is_no_answer_to_the_agents_question() -> None:
    assert classify_followup("still doesn't work", "Can you try it now?") is Followup.CORRECTION
    assert classify_followup("yes, the second one", "Which layout do you want?") is Followup.ANSWER


def test_should_have_with_a_participle_reproaches_and_with_a_noun_asks() -> None:
    assert classify_followup("You should have asked before deleting it.", "Done.") is Followup.CORRECTION
    assert classify_followup("We should have three workers for this", "Done.") is Followup.REQUEST


def test_an_opening_agreement_is_trimmed_from_the_directive() -> None:
    assert directive("ok, from now on no need to ask before each step") == "from now on no need to ask before each step"


@pytest.mark.parametrize("sentence", [
    "check the logs yourself",
    "You keep adding wrappers around the same call.",
    "we are going in circles",
    "сам открой файл",
    "Ты опять зациклился на этой гипотезе.",
    "你自己运行一下测试",
    "自分で確認して",
    "kendin kontrol et",
    "You're stuck on the indentation of the blocks.",
    "Tu bloques sur le même import.",
    "Estás atascado con el mismo archivo.",
])
def test_a_verdict_on_how_the_agent_works_is_recognised(sentence: str) -> None:
    assert says_unneeded_or_doubts(sentence)


@pytest.mark.parametrize("sentence", ["I'll do it myself", "keep the tests green", "сами тесты не трогай"])
def test_the_person_taking_a_step_or_a_plain_keep_is_no_verdict(sentence: str) -> None:
    assert not says_unneeded_or_doubts(sentence)


@pytest.mark.parametrize("sentence", [
    "The contract is fine, the problem is in the frontend.",
    "el contrato está bien, el problema está en la interfaz",
    "Le backend est bon, le problème vient du cache.",
    "Die Datenbank ist richtig, das Problem liegt im Client.",
])
def test_the_work_is_fine_and_the_problem_elsewhere_redirects_the_agent(sentence: str) -> None:
    assert says_unneeded_or_doubts(sentence)
    assert classify_followup(sentence, "I rewrote the contract.") is Followup.CORRECTION


def test_a_spanish_negative_imperative_in_either_form_corrects() -> None:
    """"no me expliques" and its formal "no me explique" both tell the agent to stop explaining."""
    for words in ("no me expliques, edita el código", "no me explique, edite el codigo directamente"):
        assert classify_followup(words, "Aquí tienes una guía paso a paso.") is Followup.CORRECTION
