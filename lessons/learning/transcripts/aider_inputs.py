"""aider's input history (`.aider.input.history`): what a person really submitted at its prompt.

aider writes two files. The chat history logs every message that reached the model as
`#### ` lines, whoever wrote it: the person, but also the architect model's reply relayed
to the editor model, the words `/ask` repeats to a new coder, `/help`'s documentation,
`/lint` output and a `--message`. The input history is prompt_toolkit's `FileHistory`: one
block per submitted input, a `# <local time>` line then the input's lines each prefixed
with `+`. It is written only for what passed through the prompt (and for a `--message` and
a suggested shell command aider ran, which aider adds itself), so it is what decides
whether a `#### ` block was typed.

What prompt_toolkit does that a reader must allow for: an input identical to the one
before it is not stored again; an answer typed at a question (`n`, `no`) is stored like any
input, an empty one (Enter for the default) is not; in `{` ... `}` multi-line mode each line
is its own prompt, so its own entry. Pure: the file's text in, entries and a ledger out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

INPUT_HISTORY = ".aider.input.history"
MAX_BYTES = 64 * 1024 * 1024
# What aider's questions accept, and what a typed answer is a prefix of (`confirm_ask`).
_ANSWERS = ("yes", "no", "skip", "all", "don't")


@dataclass(frozen=True)
class Entry:
    """One submitted input: its time (None when its header could not be read) and its text."""

    time: datetime | None
    text: str


def input_history_beside(chat_history: Path) -> Path:
    """Where aider keeps the input history of a chat history: the same folder, the same
    prefix (`.aider.chat.history.md` beside `.aider.input.history`)."""
    name = chat_history.name
    if name.endswith("chat.history.md"):
        return chat_history.with_name(name[: -len("chat.history.md")] + "input.history")
    return chat_history.with_name(INPUT_HISTORY)


def read_input_history(path: Path) -> tuple[Entry, ...] | None:
    """The entries of an input history; None when there is none to read (absent, a
    directory, too large, unreadable): the reader then cannot vouch for any typing."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return parse_input_history(path.read_bytes().decode("utf-8", "replace"))
    except OSError:
        return None


def parse_input_history(text: str) -> tuple[Entry, ...]:
    """prompt_toolkit's `load_history_strings`, keeping each entry's time: `+` lines gather
    into an entry; any other line ends it; a `# ` line gives the next entry's time."""
    entries: list[Entry] = []
    lines: list[str] = []
    when: datetime | None = None
    for line in text.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
            continue
        if lines:
            entries.append(Entry(when, "\n".join(lines)))
            lines = []
        if line.startswith("# "):
            when = _time(line[2:].strip())
    if lines:
        entries.append(Entry(when, "\n".join(lines)))
    return tuple(entries)


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def normalised(text: str) -> str:
    """Text as both files keep it: aider's chat history drops trailing spaces and the
    blank lines around an input, and strips the start of a reply."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def is_answer(text: str) -> bool:
    """Whether an input is a typed answer to one of aider's (Y)es/(N)o questions."""
    word = text.strip().lower()
    return bool(word) and any(answer.startswith(word) for answer in _ANSWERS)


def submissions(entries: tuple[Entry, ...], start: datetime, end: datetime | None) -> list[str]:
    """The inputs submitted between a run's start and the next run's, in order, with a
    `{` ... `}` multi-line input (one entry a line) folded into the one input it was.

    An entry without a readable time belongs to no run: it cannot vouch for one.
    """
    inside = [e.text for e in entries if e.time is not None and e.time >= start and (end is None or e.time < end)]
    folded: list[str] = []
    index = 0
    while index < len(inside):
        opening = inside[index].strip()
        tag = opening[1:] if opening.startswith("{") else None
        if tag is not None and (tag == "" or tag.isalnum()):
            closing = f"{tag}}}"
            body: list[str] = []
            index += 1
            while index < len(inside) and inside[index].strip() != closing:
                body.append(inside[index])
                index += 1
            folded.append("\n".join(body))
            index += 1
            continue
        folded.append(inside[index])
        index += 1
    return folded


@dataclass
class InputLedger:
    """One run's submitted inputs, consumed in order as the chat history's blocks and
    answers are matched against them.

    A block is typed when an input not yet consumed holds exactly its words; inputs
    between (answers, the `/run` lines aider adds for a suggested command it ran) are
    passed over. One repeat is allowed where prompt_toolkit stored none: the same words
    as the input just consumed.
    """

    inputs: list[str]
    position: int = 0
    _normal: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._normal = [normalised(text) for text in self.inputs]

    def typed(self, words: str) -> bool:
        """Whether these words (a `#### ` block's) were submitted at the prompt."""
        wanted = normalised(words)
        if not wanted:
            return False
        for index in range(self.position, len(self._normal)):
            if self._normal[index] == wanted:
                self.position = index + 1
                return True
        return self.position > 0 and self._normal[self.position - 1] == wanted

    def answered(self, letter: str) -> bool:
        """Whether the person typed this answer (`n`, `d`) to a question, rather than aider
        giving it (`--yes-always`, a setting): an answer input at or after the position,
        before the next input that is no answer."""
        for index in range(self.position, len(self._normal)):
            text = self._normal[index]
            if is_answer(text):
                if text.lower().startswith(letter):
                    self.position = index + 1
                    return True
                continue
            if text.startswith("/run "):
                continue
            break
        last = self._normal[self.position - 1] if self.position > 0 else ""
        return is_answer(last) and last.lower().startswith(letter)
