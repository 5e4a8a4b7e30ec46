"""What a person's later turn is, without a model: a correction, or one of the things
that are not.

Most words a person types after an agent's turn correct nothing: "ok", "thanks",
"continue", "要", a bare URL, the answer to a question the agent asked, the next
task. Recorded as reflections they would be noise, and grouped they would become
rules. So without a model only a turn this code can explain as a correction is kept:
one that contradicts or redirects what the agent just did. The rules, in order:

1. a bare URL or path (nothing else) is an **answer**: a reference the agent was given;
2. words that are all acknowledgements ("ok 開始", "yes please", "sí", "thanks") are an
   **acknowledgement**;
3. a short reply (at most `ANSWER_WORDS` words) to an agent whose last words asked a
   question is an **answer**, unless it carries a strong correction marker;
4. words carrying a marker of contradiction or redirection ("no,", "don't", "instead",
   "revert", "wrong", "不要", "違う", "en vez de", "nicht") are a **correction**;
5. anything else is a **request**: the next thing asked for.

Only corrections become reflections without a model. With a model every follow-up is
shown to the reflector, which decides (and is told to skip freely).
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum


class Followup(StrEnum):
    CORRECTION = "correction"
    ACKNOWLEDGEMENT = "acknowledgement"
    ANSWER = "answer"
    REQUEST = "request"


ANSWER_WORDS = 6

# Words that acknowledge, agree or say "go on", in the languages people were seen using.
_ACKNOWLEDGEMENTS = frozenset("""
ok okay okey k kk yes y yep yeah yup sure fine great good nice cool perfect awesome excellent thanks thank
you thx ty please pls plz continue proceed go on ahead do it lgtm sounds right correct exactly agreed
alright right got it understood done again next
sí si vale claro gracias perfecto dale bueno listo adelante continúa continua
oui merci parfait d'accord daccord vas-y allez continue
ja danke gut genau weiter passt klar
да спасибо хорошо ок продолжай давай
是 是的 好 好的 对 对的 行 可以 要 继续 開始 开始 谢谢 嗯 没问题 确认
はい お願いします ありがとう 了解 続けて うん いいよ
네 예 감사합니다 좋아요 계속
""".split())
_CJK_ACKS = tuple(sorted((w for w in _ACKNOWLEDGEMENTS if not w.isascii()), key=len, reverse=True))

# Markers that the person contradicts or redirects what the agent did.
_CORRECTION_OPENINGS = re.compile(
    r"^(?:no\b|nope\b|nah\b|wrong\b|stop\b|wait\b|don'?t\b|do not\b|never\b|not\s+(?:like|that|this)\b|"
    r"undo\b|revert\b|actually\b|why did you\b|why are you\b|you (?:should|shouldn'?t|didn'?t|forgot)\b|"
    r"i (?:said|told you|asked)\b|that'?s (?:wrong|not)\b|this is (?:wrong|not)\b|the .{1,40} is wrong\b|"
    r"non\b|nein\b|nicht\b|falsch\b|nunca\b|mal\b)",
    re.IGNORECASE,
)
_CORRECTION_ANYWHERE = re.compile(
    r"(?:\bdon'?t\b|\bdo not\b|\bnever\b|\binstead\b|\brather than\b|\bshouldn'?t\b|\bshould not\b|"
    r"\bnot what i\b|\bleave (?:[\w./-]+ ){0,4}alone\b|\b(?:still |)(?:does not|doesn'?t|did not|didn'?t|is not|isn'?t) work|\bnot working\b|\bwrong\b|\brevert\b|\bundo\b|\bput it back\b|\bstop (?:doing|using|adding)\b|"
    r"\ben vez de\b|\bno (?:uses|hagas)\b|\bau lieu de\b|\bne (?:fais|touche) pas\b|\bnicht\b|\bstatt\b|"
    r"不要|别再|不是这样|不对|错了|違う|やめて|ではなく|じゃなくて|하지 마)",
    re.IGNORECASE,
)
_STRONG = re.compile(r"(?:\bdon'?t\b|\bdo not\b|\bnever\b|\bwrong\b|\brevert\b|\bundo\b|不要|違う|やめて)",
                     re.IGNORECASE)
_URL_OR_PATH = re.compile(r"^(?:<?https?://\S+>?|[~.]?/[\w./@+-]+|[\w.-]+/[\w./@+-]+\.\w+)$")
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _WORD.findall(text.casefold())]


def _all_acknowledgement(text: str) -> bool:
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = _words(folded)
    if not words:
        return False
    for word in words:
        if word in _ACKNOWLEDGEMENTS:
            continue
        rest = word  # a run of CJK acknowledgements written without spaces ("好的继续")
        while rest:
            match = next((a for a in _CJK_ACKS if rest.startswith(a)), None)
            if match is None:
                return False
            rest = rest[len(match):]
    return True


def _asked(agent_said: str) -> bool:
    tail = agent_said.strip()[-400:]
    return tail.endswith(("?", "？")) or bool(re.search(r"\?\s*(?:\n|$)", tail))


def classify_followup(words: str, agent_said: str = "") -> Followup:
    """What a follow-up is, by the rules in this module's docstring; `agent_said` is the
    agent's last words before it."""
    text = " ".join(words.split())
    if not text:
        return Followup.ACKNOWLEDGEMENT
    if _URL_OR_PATH.match(text):
        return Followup.ANSWER
    if _all_acknowledgement(text):
        return Followup.ACKNOWLEDGEMENT
    if agent_said and _asked(agent_said) and len(_words(text)) <= ANSWER_WORDS and not _STRONG.search(text):
        return Followup.ANSWER
    if _CORRECTION_OPENINGS.match(text) or _CORRECTION_ANYWHERE.search(text):
        return Followup.CORRECTION
    return Followup.REQUEST
