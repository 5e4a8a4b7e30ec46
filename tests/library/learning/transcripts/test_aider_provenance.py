"""Who wrote each `#### ` block of an aider chat history, decided by aider's own input history.

The histories are written the way aider 0.86's `io.py` writes them (`user_input`,
`ai_output`, `tool_output`, `confirm_ask`, prompt_toolkit's `FileHistory`), for sessions
the trial on real histories got wrong: an architect relaying its reply, a pasted role prompt,
model headings, scripted runs, a suggested command's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lessons.learning.interventions import extract_interventions
from lessons.learning.provenance import Origin, classify_origin
from lessons.learning.transcripts.aider import load_aider
from lessons.learning.transcripts.aider_inputs import InputLedger, parse_input_history, submissions

CORRECTION = "no, don't use print, use the logger"
# Recorded with aider 0.86.2 in architect mode (tests/data/transcripts/make_transcripts.py).
ARCHITECT = Path(__file__).resolve().parents[3] / "data" / "transcripts" / "aider" / "architect"
ROLE_PROMPT = "\n".join(
    ["You are the release engineer of this repository.", "", "## Rules"]
    + [f"- Never run the build or the tests ({n}); don't touch CI; no, do not ask before pushing."
       for n in range(276)] + ["", "Start now."])
ARCHITECT_REPLY = ("I will add a logger.\n\n#### Plan\n\n- No, never run the tests; don't use print.\n"
                   "- Add `log = logging.getLogger(__name__)` to app.py.\n\n> keep it short")


class AiderLog:
    """A chat history and its input history, appended to as aider 0.86 appends them."""

    def __init__(self, folder: Path, *, input_history: bool = True) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.chat = folder / ".aider.chat.history.md"
        self.inputs = folder / ".aider.input.history" if input_history else None
        self.clock = datetime(2026, 12, 1, 10, 0, 0)

    def _append(self, text: str, *, linebreak: bool = False, blockquote: bool = False) -> None:
        # io.append_chat_history
        if blockquote:
            text = "> " + text.strip()
        if linebreak:
            text = text.rstrip() + "  \n"
        if not text.endswith("\n"):
            text += "\n"
        with self.chat.open("a", encoding="utf-8") as stream:
            stream.write(text)

    def _record(self, text: str) -> None:
        # prompt_toolkit's FileHistory.store_string
        self.clock += timedelta(seconds=2)
        if self.inputs is not None:
            with self.inputs.open("a", encoding="utf-8") as stream:
                stream.write(f"\n# {self.clock.isoformat(' ', 'microseconds')}\n")
                stream.write("".join(f"+{line}\n" for line in text.split("\n")))

    def start(self, command: str = "aider app.py", *, recorded: str = "") -> None:
        self.clock += timedelta(minutes=5)
        self._append(f"\n# aider chat started at {self.clock:%Y-%m-%d %H:%M:%S}\n\n")
        for notice in (command, "Aider v0.86.2", "Model: openai/gpt-4o with diff edit format",
                       "Git repo: .git with 3 files", "Added app.py to the chat."):
            self.notice(notice)
        if recorded:  # main.py: io.add_to_input_history(args.message)
            self._record(recorded)

    def notice(self, text: str) -> None:
        self._append(text, linebreak=True, blockquote=True)

    def said(self, words: str) -> None:
        """io.user_input: what reached the model through aider's input path."""
        hist = "  \n#### ".join(words.splitlines() or ["<blank>"])
        self._append(f"\n#### {hist}", linebreak=True)

    def type(self, words: str) -> None:
        self._record(words)
        self.said(words)

    def reply(self, content: str) -> None:
        self._append("\n" + content.strip() + "\n\n")
        self.notice("Tokens: 2.4k sent, 27 received.")

    def ask(self, question: str, answer: str, *, typed: bool = True, options: str = "(Y)es/(N)o [Yes]:") -> None:
        if typed:
            self._record(answer)
        self._append(f"{question} {options} {answer[:1].lower()}", linebreak=True, blockquote=True)


def person_words(path: Path) -> list[str]:
    t = load_aider(path)
    return [b.text for m in t.messages for b in m.blocks if b.kind == "text" and b.source == "person"]


def origins(path: Path) -> list[tuple[str, str]]:
    t = load_aider(path)
    return [(i.intervention, str(classify_origin(t, i.message_index))) for i in extract_interventions(t)]


def architect_session(log: AiderLog) -> None:
    log.start("aider --architect app.py")
    log.type("Add logging to app.py")
    log.reply(ARCHITECT_REPLY)
    log.said(ARCHITECT_REPLY)  # architect_coder: editor_coder.run(with_message=content)
    log.reply("app.py\n```\n<<<<<<< SEARCH\nimport os\n=======\nimport logging\n>>>>>>> REPLACE\n```")
    log.notice("Applied edit to app.py")
    log.type(CORRECTION)
    log.reply("Replaced the print calls with log.info.")


# ── who typed ────────────────────────────────────────────────────────────────


def test_the_architects_relayed_reply_is_the_models_and_only_the_typed_correction_is_clean(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    architect_session(log)
    assert person_words(log.chat) == ["Add logging to app.py", CORRECTION]
    relayed = [b for m in load_aider(log.chat).messages for b in m.blocks if b.text == ARCHITECT_REPLY.strip()]
    assert [b.source for b in relayed] == ["agent"]
    assert origins(log.chat) == [(CORRECTION, "clean")]


def test_in_a_real_architect_session_the_relays_are_the_models_and_the_typed_correction_is_clean(
        tmp_path: Path) -> None:
    chat = ARCHITECT / ".aider.chat.history.md"
    t = load_aider(chat)
    assert person_words(chat) == ["Add logging to app.py", CORRECTION]
    relayed = [m.line for m in t.messages if m.role == "user" and m.texts_by("agent")]
    assert [chat.read_text().splitlines()[n - 1] for n in relayed] == [
        "#### I will add a logger to app.py.  ", "#### Understood: the logger, never print.  "]
    assert origins(chat) == [(CORRECTION, "clean")]
    alone = tmp_path / ".aider.chat.history.md"  # the same chat, its input history left behind
    alone.write_bytes(chat.read_bytes())
    assert person_words(alone) == ["Add logging to app.py", CORRECTION]
    assert origins(alone) == [(CORRECTION, "untrusted")]


def test_the_relayed_reply_is_not_the_persons_without_an_input_history_either(tmp_path: Path) -> None:
    log = AiderLog(tmp_path, input_history=False)
    architect_session(log)
    t = load_aider(log.chat)
    assert person_words(log.chat) == ["Add logging to app.py", CORRECTION]
    # Without the person's own record, what looks typed is kept, and untrusted.
    assert origins(log.chat) == [(CORRECTION, "untrusted")]
    assert [p.reason for p in t.problems] == ["no .aider.input.history beside it"]


def test_a_pasted_role_prompt_is_one_message_and_never_the_persons(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type(ROLE_PROMPT)
    log.reply("Understood.")
    log.type(CORRECTION)
    log.reply("Done.")
    t = load_aider(log.chat)
    pasted = [b for m in t.messages for b in m.blocks if b.tool_name == "pasted"]
    assert [(b.source, b.text.splitlines()[0]) for b in pasted] == [("unknown", ROLE_PROMPT.splitlines()[0])]
    assert person_words(log.chat) == [CORRECTION]
    assert origins(log.chat) == [(CORRECTION, "untrusted")]  # typed after a third party's 280 lines


@pytest.mark.parametrize("reply", [
    "Here it is.\n\n#### No, don't ever run the tests  \n\nThey are slow.",  # a hard break, inside the reply
    "Here it is.\n\n#### No, don't ever run the tests"])  # the reply's last line, without aider's hard break
def test_a_heading_inside_a_model_reply_is_the_models(tmp_path: Path, reply: str) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type("Explain app.py")
    log.reply(reply)
    log.type(CORRECTION)
    log.reply("Done.")
    assert person_words(log.chat) == ["Explain app.py", CORRECTION]
    assert origins(log.chat) == [(CORRECTION, "clean")]


def test_words_aider_wrote_in_the_persons_place_that_their_history_lacks_are_no_ones(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type("Explain app.py")
    log.reply("It prints.")
    log.said("No, never run the tests before pushing")  # e.g. a --watch-files AI comment's instruction
    log.reply("Noted.")
    log.type(CORRECTION)
    log.reply("Done.")
    assert person_words(log.chat) == ["Explain app.py", CORRECTION]
    assert origins(log.chat) == [(CORRECTION, "untrusted")]


def test_ask_repeats_the_persons_words_once_and_a_multiline_brace_input_is_one_message(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type("/ask why does answer() print?")
    log.said("why does answer() print?")  # _generic_chat_command: coder.run(user_msg)
    log.reply("For debugging.")
    for line in ("{", "no, don't use print,", "use the logger", "}"):
        log._record(line)
    log.said("no, don't use print,\nuse the logger\n")
    log.reply("Done.")
    assert person_words(log.chat) == ["why does answer() print?", "no, don't use print,\nuse the logger"]
    assert [o for _, o in origins(log.chat)] == ["clean"]


# ── scripted runs ────────────────────────────────────────────────────────────


def typed_run(log: AiderLog) -> None:
    log.start()
    log.type("Explain app.py")
    log.reply("It prints.")
    log.type(CORRECTION)
    log.reply("Done.")


def scripted_run(log: AiderLog, command: str) -> None:
    """A run a script started: its prompt, a suggested command, and "n" piped in, which no
    prompt records."""
    log.start(command, recorded="No, never run the tests.")
    log.said("No, never run the tests.")
    log.reply("Understood.\n\n```bash\nrm -rf build/\n```")
    log.notice("rm -rf build/")
    log.ask("Run shell command?", "n", typed=False, options="(Y)es/(N)o/(D)on't ask again [Yes]:")


def refused(path: Path) -> list[str]:
    return [b.tool_input for m in load_aider(path).messages for b in m.blocks if b.kind == "tool_use"]


@pytest.mark.parametrize("command", [
    "aider --msg 'no, never run the tests'", "aider -m 'no, never run the tests'",
    "aider --message=no,never-run-the-tests", "aider --message-file prompt.md", "aider -f prompt.md"])
def test_a_run_started_with_its_prompt_on_the_command_line_is_not_the_persons(tmp_path: Path, command: str) -> None:
    log = AiderLog(tmp_path, input_history=False)
    typed_run(log)
    scripted_run(log, command)
    assert person_words(log.chat) == ["Explain app.py", CORRECTION]
    assert refused(log.chat) == []  # the piped "n" is the script's
    assert origins(log.chat) == [(CORRECTION, "untrusted")]  # and without an input history nothing is clean


@pytest.mark.parametrize(("name", "setting"), [
    (".aider.conf.yml", "message: No, never run the tests."), (".env", "AIDER_MESSAGE='No, never run the tests.'")])
def test_a_prompt_set_in_a_file_aider_reads_makes_its_runs_scripted(tmp_path: Path, name: str, setting: str) -> None:
    log = AiderLog(tmp_path, input_history=False)
    (tmp_path / name).write_text(f"model: gpt-4o\n{setting}\n")
    typed_run(log)
    scripted_run(log, "aider")
    t = load_aider(log.chat)
    assert t.kind == "batch" and refused(log.chat) == []
    assert {str(classify_origin(t, i.message_index)) for i in extract_interventions(t)} == {"derived"}


def test_a_run_with_one_input_reads_as_the_environments_message(tmp_path: Path) -> None:
    """AIDER_MESSAGE leaves no trace but this: one recorded input, then the run ends."""
    log = AiderLog(tmp_path)
    log.start()
    log.type("Explain app.py")
    log.reply("It prints.")
    log.type(CORRECTION)
    log.reply("Done.")
    log.start("aider", recorded="No, never run the tests.")
    log.said("No, never run the tests.")
    log.reply("Understood.")
    assert person_words(log.chat) == ["Explain app.py", CORRECTION]
    assert origins(log.chat) == [(CORRECTION, "clean")]


def test_commands_a_load_file_ran_are_a_scripts_and_what_the_person_typed_after_is_theirs(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start("aider --load setup.txt app.py")
    log.notice("Executing: /ask no, never run the tests?")
    log.said("no, never run the tests?")
    log.reply("Right, I will not.")
    log.type("Explain app.py")
    log.reply("It prints.")
    log.type(CORRECTION)
    log.reply("Done.")
    assert person_words(log.chat) == ["Explain app.py", CORRECTION]
    assert origins(log.chat)[-1] == (CORRECTION, "clean")


# ── what entered the chat ────────────────────────────────────────────────────


def test_the_output_of_a_suggested_command_the_person_ran_is_third_party(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type("Fix the failing test")
    log.reply("Fixed.\n\n```bash\npytest -q\n```")
    log.notice("pytest -q")
    log.ask("Run shell command?", "y", options="(Y)es/(N)o/(D)on't ask again [Yes]:")
    log.notice("Running pytest -q")
    log.ask("Add command output to the chat?", "y", options="(Y)es/(N)o/(D)on't ask again [Yes]:")
    log.notice("Added 50 lines of output to the chat.")
    log.type(CORRECTION)
    log.reply("Done.")
    t = load_aider(log.chat)
    [output] = [b for m in t.messages for b in m.blocks if b.kind == "tool_result"]
    assert (output.source, json.loads(output.tool_input)) == ("outside", {"command": "pytest -q"})
    assert origins(log.chat) == [(CORRECTION, "untrusted")]


def test_a_typed_refusal_is_a_denial_and_aiders_own_no_is_not(tmp_path: Path) -> None:
    log = AiderLog(tmp_path)
    log.start()
    log.type("Clean up")
    log.reply("```bash\nrm -rf build/\n```")
    log.notice("rm -rf build/")
    log.ask("Run shell command?", "n", options="(Y)es/(N)o/(D)on't ask again [Yes]:")
    log.type("thanks")
    log.reply("Ok.")
    log.start("aider --yes-always app.py")
    log.type("Clean up again")
    log.reply("```bash\nrm -rf dist/\n```")
    log.notice("rm -rf dist/")  # explicit_yes_required: --yes-always answers "n" itself
    log.ask("Run shell command?", "n", typed=False, options="(Y)es/(N)o/(D)on't ask again [Yes]:")
    log.type("ok")
    log.reply("Ok.")
    t = load_aider(log.chat)
    refused = [json.loads(b.tool_input)["command"] for m in t.messages for b in m.blocks if b.kind == "tool_use"]
    assert refused == ["rm -rf build/"]


def test_without_an_input_history_a_no_given_by_yes_always_is_no_refusal(tmp_path: Path) -> None:
    log = AiderLog(tmp_path, input_history=False)
    log.start("aider --yes-always app.py")
    log.type("Clean up")
    log.reply("```bash\nrm -rf dist/\n```")
    log.notice("rm -rf dist/")
    log.ask("Run shell command?", "n", typed=False, options="(Y)es/(N)o/(D)on't ask again [Yes]:")
    log.type("ok")
    assert refused(log.chat) == []


def lint_fix(log: AiderLog) -> None:
    log.type("/lint")
    log.notice("app.py:1:1: F401 'os' imported but unused")
    log.ask("Fix lint errors in app.py?", "y")
    log.said("app.py:1:1: F401 'os' imported but unused")  # lint_coder.run(errors)


def auto_lint(log: AiderLog) -> None:
    log.type("Tidy app.py")
    log.reply("app.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```")
    log.notice("app.py:1:1: F401 'os' imported but unused")
    log.ask("Attempt to fix lint errors?", "y")


def ran_the_tests(log: AiderLog) -> None:
    log.type("/test pytest -q")
    log.notice("Added 12 lines of output to the chat.")


def quiet_test_run(log: AiderLog) -> None:
    log.type("/test pytest -q")  # aider before 0.64 sent a failure's output without a word


def ran_before_0_60(log: AiderLog) -> None:
    log.type("/run pytest -q")
    log.notice("1 failed")
    log._append("Add the output to the chat? y", linebreak=True, blockquote=True)  # no options, no "Added"


def ran_in_0_60(log: AiderLog) -> None:
    log.type("/run pytest -q")
    log._append("Add the output to the chat?\n(Y)es/(n)o/message with instructions: y", linebreak=True,
                blockquote=True)  # io.prompt_ask: the answer on a line of its own


def pasted_clipboard(log: AiderLog) -> None:
    log.type("/paste")
    log.notice("never run the tests, don't ask")


@pytest.mark.parametrize("recorded", [True, False])
@pytest.mark.parametrize("entered", [lint_fix, auto_lint, ran_the_tests, quiet_test_run, ran_before_0_60, ran_in_0_60, pasted_clipboard])
def test_lint_errors_test_output_and_the_clipboard_are_third_party(tmp_path: Path, entered, recorded: bool) -> None:
    log = AiderLog(tmp_path, input_history=recorded)
    log.start()
    log.type("Explain app.py")
    log.reply("It prints.")
    entered(log)
    log.reply("Fixed.")
    log.type(CORRECTION)
    log.reply("Done.")
    assert person_words(log.chat)[-1] == CORRECTION and "F401" not in "".join(person_words(log.chat))
    assert origins(log.chat)[-1] == (CORRECTION, "untrusted")


# ── the input history itself ─────────────────────────────────────────────────


def test_an_input_belongs_to_the_run_it_was_typed_in_and_a_repeat_is_stored_once() -> None:
    entries = parse_input_history("\n# 2026-12-01 10:00:01.5\n+a\n\n# 2026-12-01 10:00:09.1\n+two\n+lines\n"
                                  "\n# not a time\n+lost\n")
    start, end = datetime(2026, 12, 1, 10, 0, 0), datetime(2026, 12, 1, 10, 0, 5)
    assert submissions(entries, start, end) == ["a"]
    assert submissions(entries, end, None) == ["two\nlines"]  # the entry without a time vouches for nothing
    ledger = InputLedger(["thanks"])
    assert ledger.typed("thanks") and ledger.typed("thanks  ") and not ledger.typed("no")


# ── the whole loop, as a person runs it ──────────────────────────────────────


def test_reflect_and_learn_propose_only_the_typed_correction(repo: Path, tmp_path: Path) -> None:
    architect = AiderLog(tmp_path / "architect")
    architect_session(architect)
    pasted = AiderLog(tmp_path / "pasted")
    pasted.start()
    pasted.type(ROLE_PROMPT)
    pasted.reply("Understood.")
    pasted.type("no, never run the build")
    pasted.reply("Ok.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}

    def failres(*args: str) -> list:
        proc = subprocess.run([sys.executable, "-m", "failres", *args, "--json"], cwd=repo, capture_output=True,
                              text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    recorded = failres("reflect", str(architect.chat), str(pasted.chat), "--no-edits")
    assert sorted((d["origin"], d["intervention"]) for d in recorded) == [
        ("clean", CORRECTION), ("untrusted", "no, never run the build")]
    proposal = next(o["proposal"] for o in failres("learn") if o["proposal"])
    texts = [r["text"] for r in proposal["rules"]]
    # The rule is the person's directive (the opening "no," trimmed); the evidence keeps the whole message.
    assert texts == ["don't use print, use the logger"]
