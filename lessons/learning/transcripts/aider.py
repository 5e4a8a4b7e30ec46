"""aider's chat history (`.aider.chat.history.md`) read into the message model.

aider writes one markdown file per repository, appended to by every run:

- `# aider chat started at <time>` opens a run;
- `#### <words>` is what the person typed (a line each; a `/command` is an order to
  aider: `/run CMD` runs a command and, once the person agrees, adds its output to
  the chat; `/web URL` adds a fetched page; `/ask`, `/code`, `/architect` carry words);
- `> <line>` is aider's own output: the command line it was started with, its
  notices, and its questions with the answer given (`... (Y)es/(N)o [Yes]: n`);
- anything else is the model's reply.

Provenance comes from those records. A run whose recorded command line passed its
prompt (`--message`, `--message-file`, `-m`, `-f`) was started by a script: when the
file also holds runs a person typed into, the scripted run's words are not theirs;
when it holds none, the whole file is a run nobody sat at (derived). A page `/web`
fetched is third-party; `/run` output has the provenance of the command; a file
added to the chat is the person's own. A question about a shell command or an edit
answered "no" is the person refusing it. The optional input history
(`.aider.input.history`, beside it) holds the same words with their times and is
not needed to read the chat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import Block, Message, Role, Transcript, is_control_input, scrub
from lessons.learning.provenance import ToolProvenance
from lessons.storage.records import derived_id

FORMAT = "aider"
CHAT_HISTORY = ".aider.chat.history.md"
RUN_OPENING = "# aider chat started at "
MAX_BYTES = 64 * 1024 * 1024
_HEADLESS_FLAGS = re.compile(r"(?:^|\s)(?:--message(?:-file)?|-m|-f)(?:\s|=)")
_QUESTION = re.compile(r"^(?P<question>.+\?) \(Y\)es/(?:\(N\)o|.*\(N\)o).*?: ?(?P<answer>\S*)\s*$")
_REFUSABLE = re.compile(r"^(?:Run shell commands?|Apply edit|Allow edits to|Create new file)", re.IGNORECASE)
_WORD_COMMANDS = ("/ask", "/code", "/architect", "/context", "/help")


def is_aider_history(path: Path) -> bool:
    """Whether a file is an aider chat history: by its name, or by its opening line."""
    if path.name.endswith(CHAT_HISTORY) or path.name == "aider.chat.history.md":
        return True
    try:
        with path.open("rb") as stream:
            head = stream.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return head.lstrip().startswith(RUN_OPENING)


def load_aider(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read one aider chat history; InvalidInput when it cannot be read or holds no run."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            msg = f"{path} is larger than {MAX_BYTES} bytes"
            raise InvalidInput(msg)
        text = scrub(path.read_bytes().decode("utf-8", "replace"))
    except OSError as exc:
        msg = f"cannot read transcript {path}: {exc.strerror or exc}"
        raise InvalidInput(msg) from exc
    runs = _runs(text)
    if not runs:
        msg = f"{path} is not an aider chat history: no {RUN_OPENING.strip()!r} line"
        raise InvalidInput(msg)
    typed = [run for run in runs if not run.headless]
    reader = _ChatReader(ToolProvenance(trusted, root=_root_of(path)), words_are_scripted=bool(typed))
    for run in runs:
        reader.read_run(run)
    kind = "interactive" if typed else "batch"
    return Transcript(session_id=f"aider/{derived_id('aider', str(path.resolve()))}", messages=tuple(reader.messages),
                      source_path=str(path), format=FORMAT, kind=kind,
                      derived_reason="" if typed else "every run was started with its prompt on the command line")


@dataclass
class _Run:
    first_line: int
    lines: list[str]
    headless: bool


def _runs(text: str) -> list[_Run]:
    runs: list[_Run] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(RUN_OPENING):
            runs.append(_Run(number, [], False))
        elif runs:
            runs[-1].lines.append(line)
    for run in runs:
        command = next((ln[2:] for ln in run.lines if ln.startswith("> ") and re.match(r"> \S*aider\b", ln)), "")
        run.headless = bool(_HEADLESS_FLAGS.search(command))
    return runs


def _root_of(path: Path) -> str:
    """The tree the chat worked in: the git repository holding the history file, else its folder."""
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(folder)


@dataclass
class _ChatReader:
    provenance: ToolProvenance
    words_are_scripted: bool
    messages: list[Message] = field(default_factory=list)
    pending_run: str = ""  # a /run command waiting for its output to enter the chat

    def read_run(self, run: _Run) -> None:
        self._append("user", [Block("text", "(a new aider run started)", "harness")], run.first_line)
        reply: list[str] = []
        reply_line = 0
        for offset, raw in enumerate(run.lines, 1):
            number = run.first_line + offset
            line = raw.rstrip()
            if line.startswith("#### ") or line.startswith("> ") or line == ">":
                if reply:
                    self._agent("\n".join(reply).strip(), reply_line)
                    reply = []
                if line.startswith("#### "):
                    self._person(line[5:].strip(), number, scripted=run.headless and self.words_are_scripted)
                else:
                    self._notice(line[2:].strip(), number)
            elif line.strip() or reply:
                if not reply:
                    reply_line = number
                reply.append(line)
        if reply:
            self._agent("\n".join(reply).strip(), reply_line)

    def _person(self, words: str, number: int, *, scripted: bool) -> None:
        if not words:
            return
        source = "harness" if scripted else "person"
        if words.startswith("/run ") or words.startswith("/test "):
            # The person's own command, not the agent's call: its output enters the chat as
            # content, with the command's provenance, once the person agrees.
            self.pending_run = words.split(" ", 1)[1]
            return
        if words.startswith("/web "):
            self._append("user", [Block("tool_result", words[5:], "web", "WebFetch", f"web{number}")], number)
            return
        if words.startswith(_WORD_COMMANDS):
            words = words.split(" ", 1)[1] if " " in words else ""
        elif is_control_input(words):
            source = "harness"
        if words:
            self._append("user", [Block("text", words, source)], number)

    def _notice(self, text: str, number: int) -> None:
        question = _QUESTION.match(text)
        if question and self.pending_run and "command output to the chat" in question["question"]:
            if question["answer"].lower() in ("y", "yes", ""):
                source = self.provenance.source_of("Bash", {"command": self.pending_run}, self.provenance.root)
                self._append("user", [Block("tool_result", f"(the output of `{self.pending_run}`)", source, "Bash",
                                            f"run{number}")], number)
            self.pending_run = ""
            return
        if question and question["answer"].lower() in ("n", "no", "d") and _REFUSABLE.match(question["question"]):
            call = f"ask{number}"
            self._append("assistant", [Block("tool_use", "", "agent", "aider", call,
                                             f'{{"question": {question["question"]!r}}}')], number)
            self._append("user", [Block("denial", "", "person", "aider", call, is_error=True)], number)
            return
        if question and "URL" in question["question"] and question["answer"].lower() in ("y", "yes", ""):
            self._append("user", [Block("tool_result", text, "web", "WebFetch", f"web{number}")], number)

    def _agent(self, text: str, number: int) -> None:
        if text:
            self._append("assistant", [Block("text", text, "agent")], number)

    def _append(self, role: Role, blocks: list[Block], line: int) -> None:
        self.messages.append(Message(index=len(self.messages), role=role, blocks=tuple(blocks), line=line))
