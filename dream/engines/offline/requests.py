"""Explicit requests in what the user said: remember, forget, rules, corrections.

Only the user's own lines count (the assistant may quote or propose things
the user never asked for). Each line is split into sentences, and a sentence
is a request only if it *starts* with a request phrase; questions and lines
that look like code are skipped, and so are throwaway phrases such as
"don't worry" or "never mind".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import polars as pl

from dream.engines.base import Evidence

# kind, pattern (matched at the start of a sentence; group "text" is the memory)
_REQUESTS: list[tuple[str, re.Pattern[str]]] = [
    # "don't forget that …" asks to remember: before the forget and rule patterns it would match.
    # ("don't forget to …" stays a rule.)
    ("remember", re.compile(r"^(?:please\s+)?(?:don'?t forget|do not forget|n'oublie pas|no olvides|não esqueça|"
                            r"nao esqueca|vergiss nicht|не забудь)(?:\s*,)?(?:\s+(?:that|que|dass|что))?[\s:,]+"
                            r"(?!(?:to|de|zu|d')\b)(?P<text>.+)$", re.I)),
    ("forget", re.compile(r"^(?:please\s+)?forget(?:\s+(?:what i (?:said|told you|wrote) )?(?:about|that))?[\s:,]+"
                          r"(?P<text>.+)$", re.I)),
    ("forget", re.compile(r"^(?:please\s+)?(?:delete|remove|drop|erase)\s+(?:the\s+|your\s+|that\s+)?"
                          r"(?:memory|memories|note|notes|entry)\s+(?:about|on|for|of)\s+(?P<text>.+)$", re.I)),
    ("forget", re.compile(r"^(?:please\s+)?(?:delete|remove|drop|erase)\s+(?:the\s+|your\s+|that\s+)?(?P<text>.+?)\s+"
                          r"(?:memory|note|entry)(?:\s+from (?:your )?memory)?$", re.I)),
    ("forget", re.compile(r"^(?:olvida|olvídate de|oublie|vergiss|забудь|esquece|esqueça|dimentica)"
                          r"(?:\s+(?:que|de|das|dass|про|о|di))?"
                          r"[\s:,]+(?P<text>.+)$", re.I)),
    ("forget", re.compile(r"^(?:忘记|忘掉|忘了)[\s:：,，]*(?P<text>.+)$")),
    # Japanese and Korean put the verb last: "…のメモは忘れて", "… 메모는 잊어줘".
    ("forget", re.compile(r"^(?P<text>.+?)(?:のこと|のメモ)?(?:は|を)?(?:もう)?忘れて(?:ください|下さい|いい)?$")),
    ("forget", re.compile(r"^(?P<text>.+?)(?:은|는|을|를)?\s*(?:잊어\s*줘|잊어\s*버려|잊어\s*주세요|잊어)$")),
    ("remember", re.compile(r"^(?:please\s+)?(?:remember|keep in mind|note that|note:|make a note that|fyi|"
                            r"for future reference|save to memory|add to memory|memorize)(?:\s+that)?[\s:,]+"
                            r"(?P<text>.+)$", re.I)),
    ("remember", re.compile(r"^(?:recuerda|recuérdalo|souviens-toi|rappelle-toi|merk dir|merke dir|запомни|lembre-se|"
                            r"ricorda)(?:\s+(?:que|de|dass|что|di|che))?[\s:,]+(?P<text>.+)$", re.I)),
    ("remember", re.compile(r"^(?:记住|请记住|记一下|覚えておいて|기억해)[\s:：,，]*(?P<text>.+)$")),
    # Japanese and Korean verb last: "…ことを覚えておいて", "… 있다는 거 기억해 줘".
    ("remember", re.compile(r"^(?P<text>.+?)(?:ということ|こと)?(?:を)?覚えておいて(?:ください|下さい)?$")),
    ("remember", re.compile(r"^(?P<text>.+?)(?:는 거|는 것|을|를)?\s*기억해\s*(?:줘|주세요|둬|둬요|놔)?$")),
    ("correction", re.compile(r"^(?:actually|correction|that's wrong|that is wrong|that's not right|no|wait|oops|sorry|"
                              r"hold on|my bad)\s*[,:;.!-]\s*"
                              r"(?P<text>.+)$", re.I)),
    ("correction", re.compile(r"^(?:actually|en realidad|de hecho|corrección|eigentlich|korrektur|en fait|na verdade|"
                              r"correção|на самом деле|поправка)\s*[,:;.!-]?\s+(?P<text>.+)$", re.I)),
    ("correction", re.compile(r"^(?:実は|訂正|いや、|사실은?|정정|其实|更正|纠正|不对[，,])[\s:：,，、]*(?P<text>.+)$")),

    ("rule", re.compile(r"^(?:from now on|going forward|de ahora en adelante|ab jetzt|désormais|a partir de agora)"
                        r"[\s,:]+(?P<text>.+)$", re.I)),
    ("rule", re.compile(r"^(?P<text>(?:always|never|don't|dont|do not|siempre|nunca|immer|niemals|nie|toujours|jamais|"
                        r"sempre|всегда|никогда)\s+.+)$", re.I)),
    ("rule", re.compile(r"^(?P<text>(?:必ず|絶対に|总是|永远不要|务必|一定要|항상|절대).+)$")),
    # Said without a lead, last so that a rule or a request wins: an *update* changes a memory
    # that states the old value, and is dropped (noted) when none does: "we moved from the old
    # office" is small talk unless a memory says so.
    ("update", re.compile(r"^(?P<text>.*\b(?:moved|changed|switched|migrated|upgraded)\s+from\s+\S.*\sto\s+\S.*)$",
                          re.I)),
    ("update", re.compile(r"^(?P<text>.+?\s(?:is|are)\s+(?:outdated|out of date|no longer true)\b.+)$", re.I)),
    # "从 X 换成 Y", "X から Y に変更", "X에서 Y로 바꿨어요": the same change in Chinese, Japanese, Korean.
    ("update", re.compile(r"^(?P<text>.*从\s*\S.*?(?:换成|改成|改为|换到|迁移到|升级到|切换到)\s*\S.*)$")),
    ("update", re.compile(r"^(?P<text>.*\S\s*から\s*\S.*?に(?:変更|移行|上げ|アップグレード|切り替え|変わ).*)$")),
    ("update", re.compile(r"^(?P<text>.*\S\s*에서\s*\S.*?(?:으로|로)\s*(?:바꿨|바뀌었|변경|옮겼|업그레이드|전환|올렸).*)$")),
    ("update", re.compile(r"^(?P<text>.+?(?:\b(?:now|these days)\b,?|,)\s+(?:not|instead of|rather than)\s+\S.*)$",
                          re.I)),
]
# "can you forget …?", "could you remember that …?": a request asked as a question.
# "Can you remember the port?" asks to recall, not to store: "remember that …" is needed.
_ASKED = re.compile(r"^(?:(?:can|could|would|will) you(?: please)?|please|pls)\s+(?=forget\b|delete\b|remove\b|drop\b|"
                    r"(?:remember|note|keep in mind) that\b)", re.I)
# Words every request above starts with. A user line holding none of them asks
# for nothing, and polars rules it out without a Python call per line (a long
# log has hundreds of thousands). Keep in step with _REQUESTS.
_LEADS = "(?i)" + "|".join([
    "forget", "olvida", "olvídate", "oublie", "vergiss", "забудь", "esquece", "esqueça", "dimentica", "olvides",
    "esqueca", "忘记", "忘掉", "忘了", "忘れて", "잊어",
    "remember", "keep in mind", "recuerda", "recuérdalo", "souviens", "rappelle", "merk", "запомни",
    "lembre", "ricorda", "记住", "记一下", "覚えておいて", "기억해",
    "actually", "correction", "wrong", "not right", r"\bno\b", "en realidad", "de hecho", "corrección",
    "eigentlich", "korrektur", "en fait", "na verdade", "correção", "на самом деле", "поправка", " from ",
    "実は", "訂正", "いや、", "사실", "정정", "其实", "更正", "纠正", "不对",
    "outdated", "out of date", "no longer true",
    "换成", "改成", "改为", "换到", "迁移到", "升级到", "切换到", "に変更", "に移行", "に上げ", "にアップグレード",
    "に切り替え", "に変わ", "로 바꿨", "로 바뀌었", "로 변경", "로 옮겼", "로 업그레이드", "로 전환", "로 올렸",
    "note", "fyi", "future reference", "memory", "memorize", "delete", "remove", "drop", "erase", "wait", "oops",
    "sorry", "hold on", "my bad", " not ", "instead of", "rather than",
    "always", "never", "don't", "dont", "do not", "from now on", "going forward", "ahora en adelante", "ab jetzt",
    "désormais", "a partir de agora", "siempre", "nunca", "immer", "niemals", r"\bnie\b", "toujours", "jamais",
    "sempre", "всегда", "никогда", "必ず", "絶対に", "总是", "永远不要", "务必", "一定要", "항상", "절대",
])
# Phrases that start like a rule but ask for nothing.
_NOT_RULES = re.compile(
    r"^(?:don'?t|do not|never)\s+(?:worry|mind|bother|know|think so|understand|care|get it)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")  # CJK text has no space after a stop
_CODE_HINTS = re.compile(r"```|^\s*[$#>]\s|[{};]\s*$|=>|\b(?:def|class|import|function|return)\b.*[(:]")


@dataclass(frozen=True)
class Request:
    kind: str  # remember | forget | rule | correction
    text: str  # what to remember/forget, as the user said it
    session: str
    date: date
    seq: int
    sentence: str  # the whole sentence, for the report

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.session, self.date.isoformat(), self.seq + 1, self.sentence)


def looks_like_code(line: str) -> bool:
    if _CODE_HINTS.search(line):
        return True
    symbols = sum(line.count(c) for c in "{}()[];=<>$|\\")
    return symbols > max(4, len(line) // 12)


# Where a forget request's naming ends and its reason begins: "forget X, we retired it".
_CLAUSE_END = re.compile(
    r"\s*(?:[,;，；、]|\s[-–—]\s|\s(?:because|since|as we|we|weil|porque|ya que|car|потому что)\s)")


def first_clause(text: str) -> str:
    head = _CLAUSE_END.split(text, maxsplit=1)[0].strip()
    return head if len(head) >= 2 else text


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


_CLAUSE_START = re.compile(r"[,;，；]\s*")


def extract(sentence: str) -> tuple[str, str] | None:
    """(kind, text) if the sentence is an explicit request.

    The request may follow a first clause ("the importer is gone, forget the
    rule about tabs"); only remember and forget count there, since "…, never
    mind" or "…, no" start nothing.
    """
    sentence = sentence.strip().strip("\"'“”").strip()
    asked = _ASKED.match(sentence)
    if asked:
        sentence = sentence[asked.end():].rstrip("?？ ")
    if not sentence or sentence.rstrip().endswith(("?", "？")) or looks_like_code(sentence):
        return None
    hit = _at_start(sentence)
    if hit:
        return hit
    for boundary in _CLAUSE_START.finditer(sentence):
        hit = _at_start(sentence[boundary.end():])
        if hit and hit[0] in ("forget", "remember"):
            return hit
    return None


def _at_start(sentence: str) -> tuple[str, str] | None:
    if _NOT_RULES.match(sentence):
        return None
    sentence = sentence.rstrip(" .。!！")
    for kind, pattern in _REQUESTS:
        match = pattern.match(sentence)
        if match:
            text = match.group("text").strip().rstrip(".。!！").strip()
            if kind in ("correction", "update") and len(text) < len(sentence):
                inner = extract(text)  # "no, remember that …" is a remember request
                if inner and inner[0] not in ("correction", "update"):
                    return inner
            if kind == "rule":
                text = text[0].upper() + text[1:]
            if kind == "forget":
                text = first_clause(text)
            if len(text) >= 3:
                return kind, text
    return None


def gather_requests(sessions: pl.DataFrame | None) -> list[Request]:
    """All requests from user lines, ordered by date, session and position."""
    if sessions is None or sessions.height == 0:
        return []
    users = (sessions.filter((pl.col("role") == "user") & pl.col("text").str.contains(_LEADS))
             .sort(["date", "session", "seq"]).select("session", "date", "seq", "text"))
    found = []
    for session, day, seq, line in users.iter_rows():
        for sentence in sentences(line):
            hit = extract(sentence)
            if hit:
                kind, text = hit
                found.append(Request(kind, text, str(session), day, int(seq), sentence))
    return found
