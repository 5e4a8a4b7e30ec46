"""One aider run read into messages: who wrote each `#### ` block, and what entered the chat.

A block is the person's only when nothing else explains it and the run's input history
holds it (`InputLedger.typed`); without a ledger it is kept as the person's words but the
transcript says, from there on, that it cannot vouch for them (a `Problem`), so nothing is
learned from it. The explanations tried first are aider's own relays, in `aider`'s
order of writing (`aider/coders/architect_coder.py`, `commands.py`):

- the architect model's reply, relayed to the editor model: the model's words;
- the words after `/ask`, `/code`, `/architect`, `/context` (or an `Executing: /ask ...` of
  a `--load`), which aider repeats to the coder it starts; `/ok`'s canned sentence; the
  documentation `/help` sends; a remembered answer (`Question? ...: a`): aider's;
- the errors `/lint` sends once "Fix lint errors in ...?" is answered yes: third-party;
- a heading inside a model reply (a reply before it and after it): the model's.

Output a command added to the chat ("Added N lines of output to the chat.", from `/run`,
`!`, `/test`, a suggested command, a test run after an edit), lint errors sent to fix, a
page `/web` or an accepted URL fetched, the clipboard `/paste` sends and a long pasted
input are third-party: whatever they say, the conversation is untrusted from them on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from lessons.learning.messages import Block, Message, Problem, Role, Source, clip, is_control_input
from lessons.learning.transcripts.aider_inputs import InputLedger
from lessons.learning.transcripts.aider_runs import RunStart

# A pasted block is not something typed: past these sizes an input is read as pasted (a
# role prompt of 280 lines once became 21 "corrections" and 8 proposed rules).
PASTED_LINES = 10
PASTED_CHARS = 2000
CONTENT_LIMIT = 2000
_QUESTION = re.compile(r"^(?P<question>.+\?) \(Y\)es/(?:\(N\)o|.*\(N\)o).*?: ?(?P<answer>\S*)\s*$")
# Before 0.60 a question was logged with the answer alone: "Add the output to the chat? y".
_OLD_QUESTION = re.compile(r"^(?P<question>.+\?) (?P<answer>y|yes|n|no)$", re.IGNORECASE)
_REFUSABLE = re.compile(r"^(?:Run shell commands?|Apply edit|Allow edits to|Create new file|Allow creation of new file|"
                        r"Edit the files)",
                        re.IGNORECASE)
_ADDED_OUTPUT = re.compile(r"^Added \d+ lines? of output to the chat\.$")
OK_WORDS = "Ok, please go ahead and make those changes."
_ANY = object()  # `/help`: whatever block comes next is aider's documentation
# aider 0.86's commands; a unique prefix runs one (`/as` is `/ask`), as in `Commands.run`.
COMMANDS = ("add", "architect", "ask", "chat-mode", "clear", "code", "commit", "context", "copy",
            "copy-context", "diff", "drop", "edit", "editor", "editor-model", "exit", "git", "help",
            "lint", "load", "ls", "map", "map-refresh", "model", "models", "multiline-mode", "ok", "paste",
            "quit", "read-only", "reasoning-effort", "report", "reset", "run", "save", "settings", "test",
            "think-tokens", "tokens", "undo", "voice", "weak-model", "web")
_CHAT_COMMANDS = ("ask", "code", "architect", "context")


def command_of(words: str) -> tuple[str, str] | None:
    """(command, its arguments) when the words are an order to aider; None when they are not."""
    if words.startswith("!"):
        return "run", words[1:].strip()
    if not words.startswith("/"):
        return None
    first, _, rest = words[1:].partition(" ")
    first = first.strip().lower()
    matching = [c for c in COMMANDS if c.startswith(first)] if first else []
    name = first if first in COMMANDS else (matching[0] if len(matching) == 1 else "")
    return name, rest.strip()


@dataclass(frozen=True)
class Item:
    """A piece of a run: `reply` (the model's text), `input` (one `#### ` block, its words),
    `notice` (one `> ` line, its text). `line` is where it starts in the file."""

    kind: str
    line: int
    text: str
    raw: str = ""


def compact(text: str) -> list[str]:
    """Lines to compare, blank ones dropped: a relay keeps the reply's blank lines, the
    chat history's item boundaries do not."""
    return [line.rstrip() for line in text.strip().splitlines() if line.strip()]


@dataclass
class _Run:
    start: RunStart
    ledger: InputLedger | None
    missing: str
    echo: object = None  # what aider will repeat next (`_ANY` for /help)
    lint_next: bool = False
    pending: str = ""  # a command whose output may be added to the chat
    output_in: bool = False  # that output is already recorded as entered
    unanswered: bool = False  # a /run whose output question this reader has not seen answered
    subject: str = ""  # the notice just before a question (a suggested command)
    region: list[str] = field(default_factory=list)  # what the model said since the last input
    reply: list[tuple[int, str]] = field(default_factory=list)
    person: list[int] = field(default_factory=list)  # messages holding the person's words
    inputs: int = 0  # what passed through the prompt: words, commands, pastes
    problem: int = -1


@dataclass
class RunReader:
    """Reads a chat history's runs one after another into one list of messages."""

    messages: list[Message] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    scripted: list[int] = field(default_factory=list)  # messages holding a script's prompt
    typed_into: bool = False

    def read_run(self, first_line: int, items: list[Item], start: RunStart, ledger: InputLedger | None,
                 missing: str) -> None:
        self._append("user", [Block("text", "(a new aider run started)", "harness")], first_line)
        run = _Run(start, ledger, missing)
        for index, item in enumerate(items):
            if item.kind == "reply":
                run.reply.append((item.line, item.text))
                run.region.append(item.text)
                continue
            if item.kind == "notice":
                self._flush(run)
                run.region.append("> " + item.text)
                self._notice(run, item)
                continue
            before = items[index - 1].kind if index else ""
            after = items[index + 1].kind if index + 1 < len(items) else ""
            self._input(run, item, inside_reply=before == after == "reply")
        self._flush(run)
        self._settle(run, first_line)
        self._end_run(run)

    def finish(self) -> tuple[tuple[Message, ...], tuple[Problem, ...], bool]:
        """The messages, the problems, and whether a person typed into any run. When one
        did, a script's prompt is the harness's; when none did, the file is derived and
        its prompts are kept as words so that reports can show them."""
        if self.typed_into:
            for index in self.scripted:
                message = self.messages[index]
                blocks = tuple(replace(b, source="harness") if b.source == "person" else b for b in message.blocks)
                self.messages[index] = replace(message, blocks=blocks)
        return tuple(self.messages), tuple(self.problems), self.typed_into

    # ── inputs ──

    def _input(self, run: _Run, item: Item, *, inside_reply: bool) -> None:
        words = item.text.strip()
        if not words or words == "<blank>":
            return
        self._settle(run, item.line)
        run.output_in = False
        if run.echo is not None:
            echo, run.echo = run.echo, None
            if echo is _ANY or compact(words) == compact(str(echo)):
                run.region = []
                self._say(item.line, words, "harness")
                return
        if run.lint_next:
            run.lint_next = False
            self._content(item.line, words, "outside", "lint")
            return
        if _relays(words, run.region):
            # The architect's reply, relayed to the editor model through aider's input path.
            self._flush(run)
            run.region = []
            self._say(item.line, words, "agent")
            return
        if _QUESTION.match(words):  # a question answered for a whole group, echoed by aider
            self._say(item.line, words, "harness")
            return
        typed = run.ledger is not None and run.ledger.typed(words)
        if inside_reply and not typed:
            run.reply.append((item.line, item.raw))
            run.region.append(item.raw)
            return
        self._flush(run)
        run.region = []
        if run.start.scripted:
            said = self._command(run, item.line, words)
            if said:
                self.scripted.append(len(self.messages))
                self._say(item.line, said, "person")
            return
        if run.ledger is not None and not typed:
            # Words aider put where a person's go, and the person's own record lacks.
            self._say(item.line, words, "unknown")
            return
        run.inputs += 1
        said = self._command(run, item.line, words)
        if not said:
            return
        if said.count("\n") >= PASTED_LINES or len(said) > PASTED_CHARS:
            self._content(item.line, said, "unknown", "pasted")
            return
        self._vouch(run, item.line)
        run.person.append(len(self.messages))
        self._say(item.line, said, "person" if not is_control_input(said) else "harness")

    def _command(self, run: _Run, line: int, words: str) -> str:
        """The words an input says to the model ("" when none), acting on an order to aider."""
        found = command_of(words)
        if found is None:
            return words
        name, rest = found
        if name in ("run", "test"):
            run.pending, run.output_in = rest or "(the configured test command)", False
            run.unanswered = name == "run"
            if name == "test":
                # aider before 0.64 sent failing test output without a word in the chat:
                # whether any entered cannot be told, so it did.
                self._output(run, line)
        elif name == "web" and rest:
            self._content(line, rest, "web", "web")
        elif name == "paste":
            self._content(line, "(the clipboard, sent by /paste)", "unknown", "paste")
        elif name in _CHAT_COMMANDS and rest:
            run.echo = rest
            return rest
        elif name == "ok":
            run.echo = f"{OK_WORDS} {rest}".strip()
            return rest
        elif name == "help" and rest:
            run.echo = _ANY
        return ""

    # ── notices ──

    def _notice(self, run: _Run, item: Item) -> None:
        text = item.text
        if text.startswith("Executing: "):  # a command of a --load file: a script's
            self._command(run, item.line, text[len("Executing: "):].strip())
            return
        if text.startswith("Running "):  # a suggested shell command the person let run
            run.pending, run.output_in = text[len("Running "):].strip(), False
            return
        if _ADDED_OUTPUT.match(text):
            if not run.output_in:
                self._output(run, item.line)
            run.pending, run.output_in, run.unanswered = "", False, False
            return
        question = _QUESTION.match(text) or _OLD_QUESTION.match(text)
        if question is None:
            run.subject = text
            return
        asked, letter = question["question"], question["answer"][:1].lower()
        yes = letter in ("y", "a", "")
        if "output to the chat" in asked:  # "Add the output ..." (before 0.60), "Add command output ..."
            if yes and not run.output_in:
                self._output(run, item.line)
            run.pending, run.unanswered = run.pending if yes else "", False
        elif asked.startswith("Fix lint errors in") and yes:
            run.lint_next = True
        elif asked.startswith(("Attempt to fix lint errors", "Attempt to fix test errors")) and yes:
            self._content(item.line, "(the errors aider asked to fix)", "outside", "lint")
        elif ("URL" in asked or asked.startswith("Add http")) and yes:
            self._content(item.line, run.subject or text, "web", "web")
        elif letter in ("n", "d") and _REFUSABLE.match(asked) and self._refused_by_person(run, letter):
            self._denial(run, item.line, asked)
        run.subject = ""

    def _output(self, run: _Run, line: int) -> None:
        """A command's output entered the chat: not recorded in the file, and could say anything."""
        self._content(line, f"(the output of `{run.pending}`)" if run.pending else "(command output)",
                      "outside", "Bash", {"command": run.pending})
        run.output_in = True

    def _settle(self, run: _Run, line: int) -> None:
        """A /run whose question went unread (aider 0.60-0.63 logged it over two lines, the
        answer on one that is no notice) let its output in: whether it did cannot be told."""
        if run.unanswered and not run.output_in:
            self._output(run, line)
        run.unanswered = False

    def _refused_by_person(self, run: _Run, letter: str) -> bool:
        if run.start.scripted or run.start.yes_always:
            return False  # aider answered itself
        return run.ledger is None or run.ledger.answered(letter)

    def _denial(self, run: _Run, line: int, asked: str) -> None:
        call = f"ask{line}"
        shell = asked.lower().startswith("run shell") and bool(run.subject)
        tool, arguments = ("Bash", {"command": run.subject}) if shell else ("aider", {"question": asked})
        self._vouch(run, line)
        run.person.append(len(self.messages) + 1)
        self._append("assistant", [Block("tool_use", "", "agent", tool, call, json.dumps(arguments))], line)
        self._append("user", [Block("denial", "", "person", tool, call, is_error=True)], line)

    # ── writing ──

    def _vouch(self, run: _Run, line: int) -> None:
        """Where the run's input history cannot vouch for the person, say so once, before
        the first thing put down as theirs: from there on nothing is clean."""
        if run.ledger is None and run.problem < 0:
            run.problem = len(self.problems)
            self.problems.append(Problem(line, run.missing, len(self.messages)))

    def _end_run(self, run: _Run) -> None:
        words = [i for i in run.person if self.messages[i].texts_by("person")]
        if run.inputs == 1 and len(words) == 1 and len(run.person) == 1 and not run.start.scripted:
            # One input, then the end: what AIDER_MESSAGE, or a message set where this reader
            # cannot look, leaves behind is exactly this, and no follow-up can be in it.
            self.scripted.append(words[0])
            run.person = []
            if run.problem >= 0:
                del self.problems[run.problem]
        self.typed_into = self.typed_into or bool(run.person)

    def _flush(self, run: _Run) -> None:
        if run.reply:
            line = run.reply[0][0]
            text = "\n".join(t for _, t in run.reply).strip()
            run.reply = []
            if text:
                self._append("assistant", [Block("text", text, "agent")], line)

    def _say(self, line: int, words: str, source: Source) -> None:
        self._append("user", [Block("text", clip(words, CONTENT_LIMIT), source)], line)

    def _content(self, line: int, text: str, source: Source, tool: str, arguments: object = None) -> None:
        tool_input = json.dumps(arguments) if arguments else ""
        self._append("user", [Block("tool_result", clip(text, CONTENT_LIMIT), source, tool, f"{tool}{line}",
                                    tool_input)], line)

    def _append(self, role: Role, blocks: list[Block], line: int) -> None:
        self.messages.append(Message(index=len(self.messages), role=role, blocks=tuple(blocks), line=line))


def _relays(words: str, region: list[str]) -> bool:
    """Whether an input repeats the model's reply since the last input: aider's notices may
    stand before and after it, and a reply may itself hold lines that look like notices.
    The relay is of the last reply, which need not be the first: after the person lets
    files into the chat, the architect answers again and aider relays only that second
    answer (a real architect session relayed "Great. Based on the current files, ..."
    and, read as no one's, it made every later correction untrusted)."""
    replies = [i for i, text in enumerate(region) if not text.startswith("> ")]
    if not replies:
        return False
    wanted = compact(words)
    # A relay starts where a reply starts (after a notice) or before it, among notices.
    starts = [i for i in range(replies[-1] + 1) if i == 0 or region[i - 1].startswith("> ")]
    return any(compact("\n".join(region[start:end])) == wanted
               for start in starts for end in range(replies[-1] + 1, len(region) + 1))
