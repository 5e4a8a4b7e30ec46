"""Corrections said without a word of correction: a report that what was done is broken,
unneeded or in doubt.

Most real corrections measured on tests/data/interventions/labelled.jsonl carry no "no,",
"wrong" or "should" (docs/transcript-format.md has the figures). People say instead:

- that the result does not work, or that the failure is back: ".git/config に反映されない"
  (it is not applied to .git/config), "devreler düzgün çalışmıyor" (the circuits do not
  work properly), "一直还残留上次的" (the last one is still there), "this is the problem
  we had before", "再度インストールしようとする" (it tries to install it again), an error
  in the agent's patch or one the person gets ("j'ai une erreur 404 sur /blog"), a crash or
  a duplicate ("ma config plante sur l'import", "le fichier est en double"). A person asking for new work does not describe a failure of the thing
  just built, so a **breakage** report counts wherever it stands in the person's own
  words, even deep inside a long prompt, where a "do NOT" is the new task's constraint;
- that what the agent is doing is not needed: "ignore the large file", "无需询问" (no
  need to ask), "gerek yok" (there is no need);
- a doubt put as a negative question about the work: "setup.sh は ... 上書きしてない？"
  (isn't setup.sh overwriting it?), "do we not have the production orchestration
  system";
- a verdict on how the agent works: it hands the work back ("do it yourself") or goes
  round in circles ("you keep adding ...", "Ты зациклился", "tu bloques sur ...");
- that the agent works on the wrong thing: "el contrato está bien, el problema está en la
  interfaz" (the contract is fine, the problem is in the interface).

Each family is a rule of the language (a negated verb of functioning, a negated need, a
negative question), never a phrase taken from the set. Pure text functions over one
sentence of the person's own words (`directives.own_words` removes pastes and quotes
first, so a log line saying "does not exist" is nobody's report).
"""

from __future__ import annotations

import re

# A verb of functioning, negated in a statement: the thing does not work, run, show,
# apply... A negated imperative ("don't run the tests") is a directive and lives in
# `followups`; "can't" and "won't" are kept because "it won't start" reports, and an
# imperative is never said with them.
_FUNCTIONING = (r"work|works|working|worked|run|runs|running|apply|applies|applied|reflect|reflected|show|"
                r"shows|shown|showing|start|starts|starting|load|loads|loading|appear|appears|happen|"
                r"happens|save|saved|saving|update|updates|updated|build|builds|compile|compiles|open|opens|"
                r"respond|responds|render|renders|display|displays|fire|fires|trigger|triggers|take effect")
_BREAKAGE = re.compile(
    # English: "it doesn't work", "the setting is not applied", "nothing happens", "still there"
    rf"(?:\b(?:doesn'?t|does not|isn'?t|is not|aren'?t|are not|won'?t|will not|can'?t|cannot|didn'?t|did not|"
    rf"wasn'?t|was not|weren'?t|never)\s+(?:\w+\s+){{0,2}}?(?:{_FUNCTIONING})\b|\bnothing (?:happens|happened|changed)\b|"
    r"\bstill (?:there|the same|happens|happening|broken|hangs|stalls|crashes)\b|"
    # an expectation the result breaks, put as a concession about what was done ("even though
    # I set it, ...", "'0' yazmasına rağmen": although it writes '0'); a concession alone
    # ("add a retry, even though it rarely fails") is as often part of a request. And a
    # verdict on the result ("unacceptable").
    r"\b(?:even though|although|despite|in spite of) (?:i|we|you)(?:'ve| have| had)? (?:\w+ed|set|told|said|put|made|ran|did)\b|"
    r"\b(?:aunque|a pesar de que) (?:ya )?(?:le |lo |la )?(?:\w+é|puse|dije|hice)\b|\bobwohl ich\b|\bbien que j'ai\b|"
    r"\bхотя я\b|\w+(?:ma|me)s[ıi]na rağmen\b|明明(?:我|已经)|虽然我(?:已经)?|"
    r"\bunacceptable\b|\binaceptable\b|\binakzeptabel\b|\bнедопустимо\b|\bkabul edilemez\b|不可接受|"
    # the failure recurs (the same error, not "the same error type")
    r"\bsame (?:error|problem|issue|bug|failure)\b(?! (?:type|class|code|message|handling|format)s?\b)|\b(?:problem|error|issue|bug) we had (?:before|earlier)\b|"
    # what was done once is done again: "it tries to install codex again"; an imperative
    # ("try to run it again") is the next request, so only the third person counts
    r"\b(?:it|this|that|the \w+)\s+(?:tries|tried|keeps trying|wants|asks) to \w+(?: [\w.-]+){0,3} again\b|"
    r"\bintenta (?:\w+ ){1,4}(?:de nuevo|otra vez)\b|\bversucht (?:\w+ ){0,4}(?:erneut|wieder)\b|"
    r"\bснова пытается\b|(?:再度|また|再び|もう一度)[^。？！\n]{0,40}(?:しようと(?:する|します|している|してる)|してしまう|されてしまう)|"
    r"又(?:要|在|去)?(?:重新|再次)(?:安装|下载|执行|运行|创建|询问)|"
    # an error in the agent's own work, or one the person now gets or still gets ("il y a une
    # erreur de syntaxe dans tes derniers patches", "j'ai une erreur 404 sur /blog", "j'ai
    # toujours ce message"); an error in code the agent did not write is the next task
    r"\bthere(?:'s| is) an? (?:\w+ ){0,2}(?:error|bug|mistake|typo) in your\b|"
    r"\b(?:une?|des) (?:\w+ ){0,3}(?:erreurs?|bugs?|fautes?) (?:\w+ ){0,3}dans (?:tes|ton|ta|vos|votre)\b|"
    r"\b(?:hay )?(?:un|una) (?:\w+ ){0,2}(?:error|bug|fallo) en (?:tu|tus|su|sus)\b|\bFehler in deine[mnr]?\b|"
    r"\bошибк[аи] в тво(?:ём|ем|ей|их)\b|你的(?:代码|修改|补丁)里?有(?:错误|问题|bug)|"
    r"\b(?:i|we)(?:'m| am| are)? (?:get|got|getting|see|saw|seeing) (?:an?|the|this|that|same) (?:\w+ ){0,2}(?:error|exception|404|500)\b|"
    # ...after trying it ("I tried to build it but got hit with a build error"), not as a wish
    # ("I want to get an error when the token is missing")
    r"\b(?:i|we) (?:(?!want|would|should|need|like|expect|must|wish)\w+ ){1,6}?(?:but |and |then )(?:got|ran into|hit)"
    r"(?: hit with)? (?:an?|the|this|that|same) (?:\w+ ){0,2}(?:error|exception|crash|404|500)s?\b|"
    r"\bj'ai (?:une|cette|la|l'|des) ?(?:\w+ ){0,2}erreurs?\b|\bj'ai toujours (?:ce|cette|le|la|l'|les|une?|des) ?(?:\w+ )?"
    r"(?:message|erreur|problème|bug|souci)s?\b|\b(?:me (?:da|sale)|tengo) (?:un|el|este|ese) error\b|"
    r"\bsigo (?:teniendo|viendo|recibiendo) (?:el|este|ese|la|esta|un|una) (?:mismo )?(?:error|mensaje|problema)\b|"
    r"\bich bekomme (?:einen|den|diesen) (?:\w+ )?Fehler\b|\bу меня (?:ошибка|вылетает)\b|エラーが(?:出る|出ます|出た)|"
    # it crashes, or comes out twice ("ma config plante sur l'import", "le fichier est en double")
    r"\b(?:crashes|crashed)\b|\bplante(?:nt)? (?:sur|au|à|quand|lors|dès|avec)\b|\ba planté\b|\bça plante\b|"
    r"\bse (?:cuelga|cae|rompe)\b|\bst[üu]rzt (?:\w+ ){0,3}ab\b|\bпада(?:ет|ют)\b|崩溃|闪退|"
    r"\b(?:is|are) (?:now )?duplicated\b|\b(?:est|sont) (?:en double|dupliquée?s?)\b|\best[aá]n? duplicad[oa]s?\b|"
    r"\bist doppelt\b|\bдублиру(?:ется|ются)\b|重复了|"
    # Spanish, Portuguese, German, French
    r"\bno (?:funciona|funcionan|funcionó|se aplica|se aplicó|se guarda|se muestra|aparece|arranca|compila|carga)\b|"
    r"\bel mismo (?:error|problema)\b|\bn[aã]o funciona\b|\bo mesmo (?:erro|problema)\b|"
    r"\bfunktioniert (?:immer noch |noch immer )?nicht\b|\bderselbe (?:Fehler|Problem)\b|"
    r"\bne (?:marche|fonctionne|s'affiche|démarre) (?:toujours )?pas\b|\bm[eê]me (?:erreur|problème)\b|"
    # Russian
    r"\bне (?:работает|работают|работал[аио]?|применяется|применились|запускается|отображается|показывается|"
    r"сохраняется|обновляется|срабатывает|компилируется)\b|\bта же (?:ошибка|проблема)\b|"
    # Turkish: the negative present ("çalışmıyor", "değiştiremiyorum"), but not of "want"
    # ("istemiyorum" is a wish for the new work, not a report), nor of "know" or
    # "understand" ("bilmiyorum", "anlamıyorum": the person's own state, not the work's)
    r"\b\w{2,}(?<!iste)(?<!isti)(?<!bil)(?<!anla)m[ıiuü]yor(?:lar|um|sun|uz)?\b|\bolmuyor\b|\baynı (?:hata|sorun|problem)\b|"
    # Japanese: a verb of functioning in the negative, not "しないで" (don't) nor "ないなら" (if not)
    r"(?:反映|表示|起動|動作|実行|適用|保存|更新|認識|変更|削除|インストール)(?:され|し|でき)(?:ない|ません|てない|ていない)"
    r"(?!で(?!す)|なら|場合|よう|と)|(?:動か|効か|映ら|直ら|消え)(?:ない|ません)(?!で(?!す)|なら|場合|よう)|"
    r"同じ(?:エラー|問題)|"
    # Chinese: not taking effect, still there
    r"(?:没有?|并没有|不)(?:生效|反应|变化|起作用|工作|成功|显示|更新|反映)|"
    r"(?:一直|仍然|依然)(?:还)?(?:在|是|残留|存在|报错|失败|没)|还(?:残留|在报错)|同样的(?:错误|问题)|又(?:报错|出现))",
    re.IGNORECASE,
)
# The person's own change: a failure after it is news about their work, not the agent's
# (the labelling rules: only what the agent did or said can be corrected).
_OWN_CHANGE = re.compile(
    r"(?:\b(?:when|after|if|once|since) i(?:'ve| have)? (?:add|added|change|changed|edit|edited|insert|inserted|"
    r"remove|removed|modify|modified|write|wrote|paste|pasted|put)\b|"
    r"\bi(?:'ve| have)? (?:added|changed|edited|inserted|removed|modified|wrote|pasted)\b|"
    r"\bcuando (?:agrego|añado|cambio|modifico|pongo)\b|\b(?:agregué|añadí|cambié|modifiqué)\b|"
    r"\bкогда я (?:добавляю|меняю|вставляю)\b|\bя (?:добавил|изменил|поменял|вставил)\b|"
    r"\b(?:ekleyince|eklediğimde|değiştirince|değiştirdiğimde)\b|"
    r"(?:追加|変更|編集|修正)したら|我(?:加了|改了|添加了|修改了|删了|删除了))",
    re.IGNORECASE,
)
# A turn that opens "but I ..." answers the agent's account with the person's own fact
# ("可是我在 X 加了require": but I did add the require there).
_BUT_I = re.compile(r"^(?:(?:but|yet|ama|ancak|но|pero|mas|mais|aber)[\s,]+(?:i|i'?ve|i'?d|ben|я|yo|eu|je|j'ai|ich)\b|"
                    r"(?:可是|但是|但|でも|だけど)[\s,，、]*(?:我|私|僕))", re.IGNORECASE)
# What the agent did or is doing is not needed.
_UNNEEDED = re.compile(
    r"(?:\bno need\b|\bnot needed\b|\bunnecessary\b|\b(?:i|we) (?:do ?n'?t|do not) need\b|^ignore\b|"
    r"\bignore (?:the|that|this|it|these|those)\b|\bno hace falta\b|\bno es necesario\b|\bnão precisa\b|"
    r"\bnicht nötig\b|\bpas besoin\b|\bне нужн[оы]\b|\bgerek yok\b|\bgereksiz\b|"
    r"无需|不需要|没必要|不用(?!谢|客气))",
    re.IGNORECASE,
)
# A verdict on how the agent works rather than on what it made: it hands the work back
# ("сам запроси доступ к файлам": ask for the files yourself), which says what to do...
_HANDS_BACK = re.compile(
    r"(?:\b(?:do|check|run|fix|find|look|ask|request|add|read|open|test)\b(?: [\w.-]+){0,3} yourself\b|"
    r"\bhazlo tú\b|\btú mismo\b|\bselbst (?:machen|prüfen|nachsehen)\b|\btoi-même\b|"
    r"^сам(?:а|и)? [а-яё]+(?:и|й|ь)(?:те)?\b|\bkendin (?:yap|bak|çalıştır|ekle|kontrol et)\b|"
    r"你自己(?:来|做|查|看|改|运行|执行)|自分で(?:やって|確認して|調べて|実行して))",
    re.IGNORECASE,
)
# ...or goes round in circles ("Ты зациклился": you are looping), which says only that.
_LOOPING = re.compile(
    r"(?:\byou keep (?:\w+ing)\b|\byou(?:'re| are) stuck\b|\btu bloques\b|\btu es bloqué|\best[aá]s atascado\b|"
    r"\bты застрял|\bdu h[äa]ngst fest\b|你卡住了|\b(?:going|running) (?:round |around )?in circles\b|\bstuck in a loop\b|"
    r"\bзациклил|\bходишь по кругу\b|\bdöngüye gir|绕圈子|原地打转|堂々巡り)",
    re.IGNORECASE,
)
# A doubt about the work, put as a negative question.
_DOUBT = re.compile(
    r"(?:^(?:do|does|did|have|has|is|are|was|were) (?:we|you|it|this|that|there) not\b|"
    r"^(?:don'?t|doesn'?t|didn'?t|haven'?t|hasn'?t|isn'?t|aren'?t|wasn'?t|weren'?t) (?:we|you|it|this|that|there)\b|"
    r"(?:してない|ていない|てない|じゃない|ではない|んじゃない)(?:の|か|ですか)?[？?]|不是[^。？?]{0,30}吗|难道|"
    r"\bразве\b)",
    re.IGNORECASE,
)


# The agent works on the wrong thing: what it changed is fine, the problem is elsewhere ("el
# contrato está bien, el problema está en la interfaz").
_ELSEWHERE = re.compile(
    r"\b(?:est[aá]|is|es|est|ist)\s+(?:bien|fine|ok|okay|correct[oa]?|richtig|bon)\b[,;.]?\s+(?:(?:but|pero|mais|aber)\s+)?"
    r"(?:el|the|le|das|la)\s+(?:problema|problem|problème|error|erreur|fehler)\s+(?:est[aá]|is|es|est|liegt|vient)\b",
    re.IGNORECASE,
)


def reports_breakage(sentence: str) -> bool:
    """Whether a sentence reports that something does not work, or that a failure is back,
    after a change that was not the person's own."""
    return bool(_BREAKAGE.search(sentence)) and not _OWN_CHANGE.search(sentence)


def says_unneeded_or_doubts(sentence: str) -> bool:
    """Whether a sentence says that what is being done is not needed, doubts it with a
    negative question, or judges how the agent works (hands the work back, loops)."""
    text = sentence.strip()
    return bool(says_what_not_to_do(text) or _DOUBT.search(text) or _LOOPING.search(text)
                or _ELSEWHERE.search(text))


def says_what_not_to_do(sentence: str) -> bool:
    """Of those, the ones that tell the agent what to do: that something is not needed, or
    to do it itself; a doubt or "you are going in circles" says only that the work is wrong."""
    text = sentence.strip()
    return bool(_UNNEEDED.search(text) or _HANDS_BACK.search(text))


def answers_back(sentence: str) -> bool:
    """Whether a sentence opens "but I ...": the person's fact against the agent's account."""
    return bool(_BUT_I.match(sentence.strip()))
