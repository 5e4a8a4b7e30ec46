"""Words about asking: a question put to the agent, and an instruction not to stop and ask.

Both carry the markers a correction carries ("should", "不要", "don't") and neither need
correct anything:

- a **question** asks. "How should the path be written here?" or "这边应该怎么写呢" wants
  advice, and a question that does push back ("why did you delete it?") still says
  nothing a later agent could follow as a rule: it is kept as a correction when its
  words make it one, and proposes nothing (`followups.gives_rule`);
- an instruction about **asking** ("don't stop to ask me", "无需询问", "確認は不要",
  "sin preguntarme") corrects an agent that had just stopped to ask. Closing the
  prompt of a new task it is how the person wants that task done, a constraint of the
  new work as a "do NOT" inside it is (`followups` rule 4), not news about the last.

Pure text functions over one sentence of the person's own words.
"""

from __future__ import annotations

import re

# A sentence put as a question: a question mark, or a question's closing particle where
# the language ends one so (Chinese 吗/呢, Japanese か/ですか, "...では" for "isn't it ...").
_QUESTION_END = re.compile(r"(?:[?？]|(?:吗|呢|么|ですか|ますか|でしょうか|では|か))[\s\"'”」)）.。…]*$")
# ... or opened by "why", which asks even without its mark ("why did you delete the tests").
# ("porque", unlike "por qué", is "because": it opens a reason, not a question.)
_WHY_OPENING = re.compile(r"^(?:why|warum|wieso|pourquoi|por qu[eé]|porqué|почему|зачем|neden|niye|为什么|为啥|なぜ|どうして)\b",
                          re.IGNORECASE)
# A question that asks how, what or where something should be: the modal is the advice
# asked for ("what should the default be?", "¿cómo debería llamarse?"), not a reproach.
_ASKS_ADVICE = re.compile(
    r"(?:\b(?:how|what|which|where|when|who)\b[^.?!\n]{0,40}\b(?:should|shall|must|ought)\b|"
    r"\b(?:should|shall) (?:i|we)\b|"
    r"\b(?:c[oó]mo|qu[eé]|cu[aá]l|d[oó]nde)\b[^.?!\n]{0,40}\b(?:deber[ií]a|debo|debemos|deve|devo)\w*\b|"
    r"\b(?:wie|was|welche[rsnm]?|wo)\b[^.?!\n]{0,40}\b(?:soll|sollte)\w*\b|"
    r"\b(?:comment|quel(?:le)?s?|o[uù])\b[^.?!\n]{0,40}\b(?:dois|doit|devrait|devrais|faut)\w*\b|"
    r"\b(?:как|что|какой|какая|какое|где)\b[^.?!\n]{0,40}\b(?:долж\w+|надо|нужно|стоит)\b|"
    r"\b(?:nas[ıi]l|ne|hangi|nerede|nereye)\b[^.?!\n]{0,40}\w+(?:mal[ıi]|meli)(?:y[ıi]m|y[ıi]z)?\b|"
    r"(?:应该|应当|该)(?:是)?[^。？?]{0,6}(?:怎么|怎样|如何|什么|哪|啥|多少)|"
    r"(?:どう|どの|何|どこ|どれ)[^。？?]{0,20}(?:べき|ばいい|たらいい|といい))",
    re.IGNORECASE,
)

# An instruction not to stop, ask, wait or check with the person before going on.
_ABOUT_ASKING = re.compile(
    r"(?:\b(?:don'?t|do not|never)\s+(?:stop|pause|wait)\b(?:\s+(?:to|and)\s+(?:ask|check|confirm)\w*)?"
    r"(?:\s+(?:me|with me|for (?:me|my \w+|confirmation|approval|input)))?|"
    r"\b(?:don'?t|do not|never|no need to|you don'?t need to)\s+(?:ask|check with|confirm with|wait for)\b"
    r"(?:\s+(?:me|for (?:me|my \w+|confirmation|approval|permission|input)))?|"
    r"\bwithout (?:asking|stopping|checking with|waiting for|confirmation)\b(?:\s+(?:me|for \w+))?|"
    r"\bsin (?:preguntar(?:me)?|parar|detenerte|consultar(?:me)?)\b|\bno (?:me )?(?:preguntes|consultes)\b|"
    r"\bno te (?:detengas|pares)\b|\bsem (?:perguntar|parar)\b|\bn[aã]o (?:me )?pergunte\b|\bn[aã]o pare\b|"
    r"\bohne (?:zu )?(?:fragen|nachzufragen|anzuhalten|rückfrage)\b|\bfrag(?:e)? (?:mich )?nicht\b|"
    r"\bsans (?:me )?(?:demander|t'arrêter|arrêter|confirmation)\b|\bne (?:me )?demande pas\b|\bne t'arrête pas\b|"
    r"\bне (?:спрашивай|переспрашивай|останавливайся)\b|\bбез (?:вопросов|подтверждения|остановок)\b|"
    r"\bsormadan\b|\bbana sorma\b|\bdurmadan\b|\bonay (?:beklemeden|isteme)\b|"
    r"(?:不要|不用|无需|不必|别|不需要)再?(?:停(?:下来?)?|暂停)?(?:来)?(?:问我|询问|请示|确认|等我确认|问)|"
    r"(?:不要|别)再?停(?:下来?)?|"
    r"(?:確認|質問)(?:は|を)?(?:不要|いらない|しないで|せずに|なしで)|(?:聞か|止まら|止め)ないで)",
    re.IGNORECASE,
)


def is_question(sentence: str) -> bool:
    """Whether a sentence is put as a question: it asks, whatever it also implies."""
    text = sentence.strip()
    return bool(_QUESTION_END.search(text) or _WHY_OPENING.match(text))


def asks_advice(sentence: str) -> bool:
    """Whether a sentence asks how, what or where something should be: a question whose
    "should" is the advice wanted."""
    text = sentence.strip()
    return bool(_ASKS_ADVICE.search(text)) and (is_question(text) or bool(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text)))


def without_asking_words(sentence: str) -> str:
    """The sentence without its instructions not to stop and ask ("implement the parser,
    don't stop to ask me" is "implement the parser,")."""
    return " ".join(_ABOUT_ASKING.sub(" ", sentence).split())


def is_about_asking(sentence: str) -> bool:
    """Whether a sentence tells the agent not to stop, ask or wait for the person."""
    return bool(_ABOUT_ASKING.search(sentence))
