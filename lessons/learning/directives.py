"""Which of a person's words are theirs, and which of those are the directive.

A person's turn is rarely one clean instruction. It carries praise for the last step
("thanks, that works."), agreement ("perfecto, eso es."), an opening "no," and, as
often as not, something pasted: a stack trace, a log, a reviewer's comment, another
model's answer. Two readers need them told apart:

- the classifier (`followups`), because a "do NOT" or a "wrong" inside a paste or a
  quoted review is someone else's word, not the person pushing back on the agent
  (seen in a trial on real transcripts: a pasted "You're right, I apologize ..." and
  a log line "ERROR wrong password" read as corrections);
- a rule proposed without a model (`candidates`), because a rule is the directive,
  not the whole message: the trial's rules were "thanks, that works. Always run ruff
  ...", praise and all. The evidence keeps the whole message; the rule does not.

Pure text functions; nothing here knows about transcripts or the store.
"""

from __future__ import annotations

import re
import unicodedata

# A fenced block, a quoted line ("> ..."), and lines that are a program's output rather
# than a person's words: tracebacks, stack frames, log lines, a shell prompt.
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_PASTED_LINE = re.compile(
    r"^\s*(?:>|\$ |#!|at [\w.$<>]+\(|File \"|Traceback \(most recent|\w+(?:Error|Exception)\b[:(]|"
    r"(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL)\b|(?:fatal|error|fail|warn|warning|info):|"
    r"\d{4}-\d\d-\d\d[ T]\d\d:|[|+][-=+|]{3,}|<[/?!\w][^>]*>\s*$|[{}\[\]();]+\s*$)"
)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\)")
_SENTENCE_END = re.compile(r"(?<=[.!?;？！。；])\s+|(?<=[。！？；])|\n+")
# An opening "no," or an opening agreement ("可以, from now on ..."), which the rule does
# not need; the sentence stays whole when nothing follows.
_LEADING_INTERJECTION = re.compile(
    r"^(?:no|nope|nah|non|nein|não|nao|错了|不对|不是|違う|"
    r"ok(?:ay)?|yes|sure|fine|sí|vale|oui|ja|да|evet|tamam|好的?|可以|行|嗯|はい)\s*[,，、:;!.]+\s*",
    re.IGNORECASE)

# Sentences that only thank, praise, agree or greet: never a directive.
_COURTESY = re.compile(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|great|good|nice|cool|perfect|awesome|excellent|thanks?|thank you|"
    r"thx|ty|lgtm|exactly|right|correct|agreed|fine|hi|hello|hey|that works|this works|it works|"
    r"that'?s it|that'?s (?:right|better|good|great|perfect)|looks good|well done|"
    r"sí|si|vale|claro|gracias|perfecto|genial|bien|bueno|exacto|eso es|muy bien|hola|"
    r"ja|danke|gut|genau|super|prima|passt|perfekt|richtig|hallo|"
    r"oui|merci|parfait|d'accord|bien|exactement|bonjour|salut|"
    r"obrigad[oa]|ótimo|otimo|isso|certo|olá|ola|"
    r"好|好的|谢谢|对|对的|可以|不错|很好|嗯|是的|没错)[\s,!.。，！~]*)+$",
    re.IGNORECASE,
)


# Codex's IDE extension sends the editor's state before the person's words ("# Context
# from my IDE setup:", the active file, its selection, the open tabs) and then "## My
# request for Codex:"; only what follows that heading is the person's.
_IDE_CONTEXT = re.compile(r"\A\s*# Context from my IDE setup:.*^## My request for Codex:[ \t]*\n?",
                          re.DOTALL | re.MULTILINE)


def own_words(text: str) -> str:
    """The person's own words: `text` without an IDE's context block, fenced blocks,
    quoted lines and pasted program output (everything after a traceback's first line,
    up to a blank line)."""
    text = _IDE_CONTEXT.sub("", unicodedata.normalize("NFKC", text), count=1)
    text = _FENCE.sub("\n", text)
    kept: list[str] = []
    in_traceback = False
    for line in text.splitlines():
        if _TRACEBACK.match(line):
            in_traceback = True
        if in_traceback:
            in_traceback = bool(line.strip())
            continue
        if not _PASTED_LINE.match(line):
            kept.append(line)
    return "\n".join(kept).strip()


# A list's number ("1.", "2)", "a.") ends in a full stop but is no sentence: it belongs to
# the item it numbers.
_ENUMERATOR = re.compile(r"^\(?(?:\d{1,2}|[a-z])[.)]$", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The sentences of a person's words, in order, blank ones dropped, a list's number
    kept with its item."""
    found: list[str] = []
    number = ""
    for piece in (s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()):
        if _ENUMERATOR.match(piece):
            number = f"{number} {piece}".strip()
            continue
        found.append(f"{number} {piece}".strip() if number else piece)
        number = ""
    return found + ([number] if number else [])


def is_courtesy(sentence: str) -> bool:
    """Whether a sentence only thanks, praises, agrees or greets."""
    return bool(_COURTESY.match(sentence.strip()))


def directive_of(text: str, is_directive=None) -> str:
    """The directive in a person's correction: their own words without courtesy
    sentences and an opening bare "no,", and, when `is_directive(sentence)` names some
    sentences, only those (with the question that goes with a "why did you ..."). Falls
    back to the own words, then to the whole text, so it is never empty when the text
    is not."""
    words = own_words(text)
    kept = [s for s in sentences(words) if not is_courtesy(s)]
    if is_directive is not None:
        marked = [s for s in kept if is_directive(s)]
        kept = marked or kept
    cleaned = [_LEADING_INTERJECTION.sub("", s, count=1).strip() for s in kept]
    directive = " ".join(s for s in cleaned if s)
    return directive or " ".join(words.split()) or " ".join(text.split())
