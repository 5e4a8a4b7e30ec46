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
4. a sentence of the person's own words (not a paste, a quoted line or a log:
   `directives.own_words`) carrying a marker of contradiction or redirection is a
   **correction**: a negation of what was done ("no,", "don't", "revert", "wrong"),
   "should be / should have", "always / never / only" as a directive, "instead",
   "not X but Y", "still does not work", and their counterparts ("en vez de", "deberías",
   "sigue sin funcionar", "statt", "hättest", "au lieu de", "devrait", "em vez de",
   "не надо", "вместо", "tam tersi", "olmalı", "不要", "应该", "还是不行", "べき").
   In a prompt for new work (long or many sentences) only its first sentence or two
   count, and of a sentence that is itself a prompt's length only its first clause;
   in one opening "next:" or "new task" only the first: a "do NOT" inside the task is
   part of the task. A Japanese 不要 ("unnecessary") in an "if" clause ("不要なら削除して",
   delete it if unneeded) judges nothing, a question asking how something should be
   ("how should the path be written?", "应该怎么写") asks for advice (`asking`), and an
   instruction not to stop and ask that closes a new task ("..., 不要停下来问我") is how
   that task is to be done, a correction only after an agent that asked;
5. so is a turn that says, without any such marker, that what was done is broken ("the
   setting is not applied", "çalışmıyor", "一直还残留"), not needed ("ignore the large
   file", "无需询问") or in doubt ("isn't setup.sh overwriting it?"), that the agent hands
   the work back or loops ("do it yourself", "you keep ..."), or that opens "but I ..."
   against the agent's account (`symptoms`); a breakage counts wherever it stands in
   the person's own words, since a failure is never a constraint of the new task;
6. anything else is a **request**: the next thing asked for.

Of the corrections, only those that say what to do give a rule (`gives_rule`): a
report that the work is broken, a verdict ("X is wrong") and a question correct this
agent and give a later one nothing to follow.

Only corrections become reflections without a model. With a model every follow-up is
shown to the reflector, which decides (and is told to skip freely).
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from lessons.learning import asking, directives, symptoms


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

# Markers that the person contradicts or redirects what the agent did, by family, in the
# languages people were seen using. Measured on tests/data/interventions/labelled.jsonl
# (docs/transcript-format.md has the figures): each family is a rule of language, not a
# phrase taken from that set.
_CORRECTION_OPENINGS = re.compile(
    # a negation of what was done, at the start
    r"^(?:no\b|nope\b|nah\b|wrong\b|stop\b|wait\b|don'?t\b|do not\b|never\b|not\s+(?:like|that|this|a|an|the)\b|"
    r"undo\b|revert\b|actually\b|why did you\b|why are you\b|you (?:should|shouldn'?t|didn'?t|forgot|missed|broke)\b|"
    r"i (?:said|told you|asked)\b|that'?s (?:wrong|not)\b|this is (?:wrong|not)\b|the .{1,40} is wrong\b|"
    r"always\b|only (?:edit|change|touch|modify)\b|rather than\b|instead\b|"
    r"non\b|nein\b|nicht\b|falsch\b|não\b|nao\b|nunca\b|mal\b|siempre\b|sempre\b|immer\b|nie\b|niemals\b|"
    r"toujours\b|jamais\b|te dije\b|ich (?:sagte|habe (?:doch )?gesagt)\b|je (?:t'ai|vous ai) dit\b|eu disse\b|"
    r"总是|永远|每次|错了|不对|别)",
    re.IGNORECASE,
)
_CORRECTION_ANYWHERE = re.compile(
    # English: negation, should/should-have, only-not, instead, still failing, undo
    r"(?:\bdon'?t\b|\bdo not\b|\bnever\b|\binstead\b|\brather than\b|\bshouldn'?t\b|\bshould not\b|"
    r"\bshould (?:be|only|go|live|stay|use|read|come)\b|\bmust not\b|"
    # "should have" + a past participle ("should have asked") is a reproach; "should have 6
    # agents" is a wish for the next work
    r"\bshould have (?:been|done|run|put|set|read|made|kept|left|told|said|let|got|gone|seen|written|\w+ed)\b|"
    r"\b(?:edit|change|touch|modify|use|run)\s+only\b|\bonly\s+(?:edit|change|touch|modify)\b|"
    r"\bnot what i\b|\bleave (?:[\w./-]+ ){0,4}alone\b|\bwhy did you\b|\byou forgot\b|\byou (?:broke|missed)\b|"
    r"\bwrong\b|\brevert\b|\bundo\b|\bput it back\b|\bstop (?:doing|using|adding)\b|"
    # Spanish and Portuguese
    r"\ben vez de\b|\ben lugar de\b|\bem vez de\b|\bao inv[eé]s de\b|\bno (?:uses|hagas?|toques?|cambies|borres?|me expliques?)\b|"
    r"\bdeber[ií]an?\b|\bdeber[ií]as haber\b|\bdebiste\b|\bdeben? (?:ir|estar|quedar|guardarse|usar)\b|"
    r"\bsolo (?:cambia|modifica|toca|edita)\b|\best[aá] mal\b|"
    r"\bdevem? (?:ficar|estar|ir|usar)\b|\bdeveria\b|\bapenas (?:altere|mude|edite)\b|"
    # German
    r"\bstatt\b|\banstatt\b|\bsondern\b|\bsollte\b|\bh[aä]ttest\b|\bgeh[oö]rt (?:nach|in)\b|\bfalsch\b|"
    r"\b(?:[äa]ndere|bearbeite) nur\b|\br[uü]ckg[aä]ngig\b|\bwarum hast du\b|"
    # French
    r"\bau lieu de\b|\bne (?:fais|touche|modifie|change) (?:pas|que)\b|\bdevrait\b|\baurais d[uû]\b|"
    r"\bdoivent (?:aller|être|rester)\b|\bpourquoi (?:as-tu|tu as)\b|\bannule\b|"
    # "what I asked (for)": the person says the agent did something else
    r"\bwhat i (?:asked|told you|said)\b|\blo que te (?:ped[ií]|dije)\b|"
    # Russian
    r"\bне (?:надо|нужно|так|то|трогай|меняй|используй|делай)\b|\bнеправильно\b|\bвместо\b|"
    r"\bдолж(?:ен|на|но|ны) (?:быть|был[аио]?)\b|\bя же (?:сказал|просил)|\bверни\b|"
    # Turkish
    r"\btam tersi\b|\bolmal[ıi](?:yd[ıi])?\b|\bolmamal[ıi]\b|\byanl[ıi][şs]\b|\byerine\b|\bgeri al\b|"
    # Chinese and Japanese; a Japanese 不要 ("unnecessary") in an "if" clause judges nothing
    r"不要(?!なら|であれば|な場合|かどうか)|别再|不是这样|不对|错了|应该|而不是|撤销|改回|"
    r"違う|やめて|ではなく|じゃなくて|しないで|必要ない|いらない|べき|元に戻して|하지 마)",
    re.IGNORECASE,
)
# That the last work is still broken, by the same families: a correction, but a report,
# which says nothing a later agent could follow (`gives_rule`).
_STILL_BROKEN = re.compile(
    r"(?:\bstill\b[^.?!\n]{0,40}(?:\bnot\b|n'?t\b|\bfails?\b|\bbroken\b|\breturns?\b|\berrors?\b|\bcrash)|"
    r"\bwhy\b[^.?!\n]{0,30}\bnot any ?more\b|\bno longer (?:works?|runs?|shows?|starts?)\b|"
    r"\bsigue sin funcionar\b|\bsigue fallando\b|\bainda n[aã]o funciona\b|\bimmer noch nicht\b|"
    r"\bnoch immer nicht\b|\btoujours pas\b|\b(?:вс[её] ещ[её]|до сих пор) не\b|还是不行|还是没|"
    r"\bh[aâ]l[aâ]\b[^.?!\n]{0,40}(?:m[ıiuü]yor|problem|sorun|hata|k[öo]t[üu])|"
    r"まだ[^。？！\n]{0,20}(?:ない|ません))",
    re.IGNORECASE,
)
# A verdict on the work: that it is wrong, said as a judgement, with nothing said of what
# right would be. It corrects this agent; it gives a later one nothing to follow.
_VERDICT = re.compile(
    r"(?:\b(?:that'?s|this is|it'?s|is|are|was|were|looks?|seems?)\s+(?:(?:all|still|completely|totally|just|"
    r"clearly)\s+)?(?:wrong|incorrect|not right|broken)\b|\bwrong\b|\bnot what i (?:asked|wanted|meant)(?: for)?\b|"
    r"\best[aá] mal\b|\b(?:ist )?falsch\b|\bc'est faux\b|\bнеправильно\b|\byanl[ıi][şs](?:t[ıi]r)?\b|"
    r"\bunacceptable\b|\bkabul edilemez\b|(?:好像|似乎)?(?:弄|搞|写|改)?错了|不对|不是这样(?:的)?|違う|間違って(?:いる|る|います))",
    re.IGNORECASE,
)
# An opening "no," (or "wrong,", "不对不对吧,"): what follows it, if anything, is what to do
# instead.
_NEGATION_OPENING = re.compile(
    r"^(?:(?:(?:no|nope|nah|wrong|non|nein|n[aã]o|нет|hay[ıi]r)\b|不对|不是|错了|違う|ちがう|いや)"
    r"(?:[\s,.!:;，、。！]|吧|啊|呀)*)+",
    re.IGNORECASE,
)
_STRONG = re.compile(r"(?:\bdon'?t\b|\bdo not\b|\bnever\b|\bwrong\b|\brevert\b|\bundo\b|不要(?!なら)|違う|やめて)",
                     re.IGNORECASE)
# How a new task's prompt opens; in one, a "do NOT" is part of the task, not a correction.
_NEW_TASK = re.compile(
    r"^(?:next\b|now (?:implement|build|write|create|add)\b|let'?s (?:move on|now|start)\b|new task\b|"
    r"neue aufgabe\b|nueva tarea\b|nouvelle t[aâ]che\b|nova tarefa\b|新任务|下一个任务)",
    re.IGNORECASE,
)
# Own words longer than this, or of this many sentences (courtesy aside), are a prompt for
# new work: a person pushing back says so in a sentence or two, and first.
LONG_PROMPT_CHARS = 220
PROMPT_SENTENCES = 3
_URL_OR_PATH = re.compile(r"^(?:<?https?://\S+>?|[~.]?/[\w./@+-]+|[\w.-]+/[\w./@+-]+\.\w+)$")
_CLAUSE_END = re.compile(r"[,;:，、；：]")
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


def is_correction_sentence(sentence: str) -> bool:
    """Whether one sentence carries a marker of contradiction or redirection, or says that
    what is being done is not needed or in doubt, or reports it broken (`symptoms`)."""
    return _directs(sentence) or symptoms.reports_breakage(" ".join(sentence.split()))


def _directs(sentence: str) -> bool:
    text = " ".join(sentence.split())
    if asking.asks_advice(text) and not _STRONG.search(text):
        return False  # "how should the path be written here?" wants advice
    return bool(_CORRECTION_OPENINGS.match(text) or _CORRECTION_ANYWHERE.search(text) or _STILL_BROKEN.search(text)
                or symptoms.says_unneeded_or_doubts(text) or symptoms.answers_back(text))


def _correcting_sentences(words: str) -> list[str]:
    """The sentences that make a turn a correction: where a correction can be
    (`_where_a_correction_can_be`) those that direct or report a breakage, or else any
    sentence of the person's own words, wherever it stands, that reports one. Unlike a
    "do NOT", a failure described inside a long prompt is no constraint of the new task
    but news about the last one (measured on real turns: "Sahnedeki 'CLK' elemanı stabil
    çalışmıyor." came third in a prompt of several hundred characters)."""
    mine = directives.own_words(words)
    parts = [s for s in directives.sentences(mine) if not directives.is_courtesy(s)]
    window = _where_a_correction_can_be(words)
    marked = [s for s, opening in zip(parts, window) if is_correction_sentence(opening)]
    return marked or [s for s in parts if symptoms.reports_breakage(" ".join(s.split()))]


def _where_a_correction_can_be(words: str) -> list[str]:
    """The sentences of a turn that can correct the agent: its own words (not a paste or
    a quote), courtesy aside, and of a prompt for new work only the opening (`_opening`
    of its first two sentences, of the first alone after "next:"), where a person who
    pushes back says so before asking for more. Measured on real turns: "Tam tersi
    çalışmalı." (it should work the other way round) came second, after the symptom."""
    mine = directives.own_words(words)
    parts = [s for s in directives.sentences(mine) if not directives.is_courtesy(s)]
    if not parts:
        return []
    if _NEW_TASK.match(parts[0]) or len(mine) > LONG_PROMPT_CHARS or len(parts) >= PROMPT_SENTENCES:
        return [_opening(parts[0])] if _NEW_TASK.match(parts[0]) else [_opening(p) for p in parts[:2]]
    return parts


def _opening(sentence: str) -> str:
    """The opening of a prompt's first sentence: all of it, or, when that one sentence is
    itself a prompt's length, its first clause ("I want the README updated and tests in
    a folder, which should ..." pushes back on nothing)."""
    if len(sentence) <= LONG_PROMPT_CHARS:
        return sentence
    return _CLAUSE_END.split(sentence, maxsplit=1)[0]


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
    if (agent_said and _asked(agent_said) and len(_words(text)) <= ANSWER_WORDS and not _STRONG.search(text)
            and not symptoms.reports_breakage(text)):
        return Followup.ANSWER
    correcting = _correcting_sentences(words)
    if correcting and not (_closes_a_task_with_asking(words, correcting) and not _asked(agent_said)):
        return Followup.CORRECTION
    return Followup.REQUEST


def _closes_a_task_with_asking(words: str, correcting: list[str]) -> bool:
    """Whether the only correction in a turn is an instruction not to stop and ask, and the
    turn asks for work besides: "add the export page, don't stop to ask me" says how the
    new task is to be done (`asking`). After an agent that asked, it corrects the asking."""
    if not all(asking.is_about_asking(s) and not is_correction_sentence(asking.without_asking_words(s))
               for s in correcting):
        return False
    mine = [s for s in directives.sentences(directives.own_words(words)) if not directives.is_courtesy(s)]
    task = " ".join(asking.without_asking_words(s) for s in mine).strip(" ,.;:!，、。")
    return _has_content(task) and not _all_acknowledgement(task)


def _instructs(sentence: str) -> bool:
    """Whether a correcting sentence says what to do or not to do (a marker of redirection,
    "not needed", a hand-back, or an opening "no," followed by what to do instead), rather
    than only reporting a breakage, answering back with the person's own fact, judging
    the work ("X is wrong", "这边好像弄错了") or asking: only such a sentence can be a later
    agent's rule. A verdict says the work is wrong, not what right is; a question asks."""
    text = " ".join(sentence.split())
    if asking.is_question(text):
        return False
    negation = _NEGATION_OPENING.match(text)
    rest = _VERDICT.sub(" ", text[negation.end():] if negation else text).strip(" ,.;:!")
    rest = _NEGATION_OPENING.sub("", rest).strip()
    if (_CORRECTION_OPENINGS.match(rest) or _CORRECTION_ANYWHERE.search(rest)
            or symptoms.says_what_not_to_do(rest)):
        return True
    # The whole sentence too: the "No" of "No funciona el botón" is the report's own negation.
    reports = any(symptoms.reports_breakage(said) or _STILL_BROKEN.search(said) or symptoms.says_unneeded_or_doubts(said)
                  for said in (rest, text))
    return bool(negation) and _has_content(rest) and not reports


def _has_content(words: str) -> bool:
    """Whether words say something: two words, or a few CJK characters."""
    return len(_words(words)) >= 2 or len(re.findall(r"[\u3040-\u30ff\u4e00-\u9fff]", words)) >= 3


def gives_rule(words: str) -> bool:
    """Whether a correction holds a directive a rule can be made of. "the setting is not
    applied to .git/config", "but I did add the require", "this part is wrong" or "why did
    you delete it?" tells this agent its work is wrong,
    and is kept as a correction, but as a rule for every later agent it would say nothing
    they could follow. A turn recorded as a correction in which these rules find no
    correcting sentence (a model's verdict, an older rule's) is left to its record."""
    correcting = _correcting_sentences(words)
    return not correcting or any(_instructs(sentence) for sentence in correcting)


def directive(words: str) -> str:
    """The directive of a correction: the sentences that made it one
    (`_correcting_sentences`), those that instruct when some do, without courtesy, an
    opening "no," or a paste (`directives.directive_of`)."""
    correcting = _correcting_sentences(words)
    chosen = set(s for s in correcting if _instructs(s)) or set(correcting)
    return directives.directive_of(words, lambda sentence: sentence in chosen)
