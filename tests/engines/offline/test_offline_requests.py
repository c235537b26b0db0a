"""Requests on a store that grows: same answers as re-reading everything, linear work.

The catalog (dream/engines/offline/catalog.py) answers the request questions
from word indexes kept current as requests edit the store. Two checks:

* the engine with the catalog leaves the same files, changes and notes as
  with `BruteCatalog` below, which answers every question by re-reading the
  whole store, as the engine did before (and still does in merge_duplicates);
* the number of normalizations, index-line parses and rapidfuzz scores grows
  linearly when requests and memories double (no timing involved).
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from rapidfuzz import fuzz

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.store.staging import Staging
from dream.engines.offline import OfflineEngine, catalog, consolidate
from dream.engines.offline.catalog import Entry, forget_text, keys
from dream.engines.offline.orient import Memory, Workspace, memories
from dream.engines.offline.placement import insert_at
from dream.engines.offline.requests import extract, gather_requests
from dream.engines.offline.similarity import FORGET_MIN, covers, forget_keys, forget_score, normalize
from dream.store import model
from dream.store.model import parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, materialize, read_tree

TODAY = date(2026, 3, 10)
SYLLABLES = "ka lo mi ne ru sa te vi do pe ga fu zi bo ha".split()
VOCABULARY = ["the", "and", "use", "run", "deploy", "with"] + [
    a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:1500]
WEIGHTS = [1 / (rank + 1) ** 0.8 for rank in range(len(VOCABULARY))]


class BruteCatalog:
    """The catalog's questions answered by re-reading the whole store each time."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.threshold = ws.settings.similarity_threshold

    def _entries(self) -> list[tuple[Entry, str]]:
        store = self.ws.store
        hooks: dict[str, list[str]] = {}
        for line in store.parsed_index():
            if line.kind == "link" and resolve_link(INDEX_NAME, line.target):
                hooks.setdefault(resolve_link(INDEX_NAME, line.target), []).append(f"{line.title} {line.hook}")
        found = []
        for rank, m in enumerate(memories(store)):
            text = forget_text(store.topics[m.key], hooks.get(m.key, [])) if m.kind == "topic" else m.text
            found.append((Entry(m, (0, rank, m.key), normalize(m.text), frozenset(), "", frozenset()), text))
        return found

    def covering(self, text: str) -> Memory | None:
        needle = normalize(text)
        if not needle:
            return None
        details = catalog.details_of(text)
        for entry, _ in self._entries():
            if entry.norm and details <= keys(entry.norm) and covers(needle, entry.norm, self.threshold):
                return entry.memory
        return self._restating(text, details)

    def _restating(self, text: str, exact: frozenset[str]) -> Memory | None:
        """Every memory scored: most shared content words, then first in order, holding every name and number."""
        content = keys(normalize(catalog._REDACTED.sub(" ", text))) - catalog._function_keys()
        if len(content) < catalog.RESTATED_MIN_WORDS:
            return None
        scored = []
        for entry, _ in self._entries():
            held = keys(entry.norm)
            shared = len(content & held)
            if shared >= catalog.RESTATED_SHARE * len(content) and exact <= held:
                scored.append((-shared, entry.rank, entry.memory))
        return min(scored, key=lambda s: s[:2])[2] if scored else None

    def said_in_another_language(self, text: str) -> Memory | None:
        """Every memory read: the only one holding each known content word, in another language."""
        content = keys(normalize(catalog._REDACTED.sub(" ", text))) - catalog._function_keys()
        entries = [entry for entry, _ in self._entries()]
        holding = {k: [e for e in entries if k in keys(e.norm)] for k in content}
        known = [k for k in content if holding[k]]
        if not known or len(known) == len(content) or any(len(holding[k]) > 1 for k in known):
            return None
        if len(known) == 1 and known[0] not in catalog._written_as_name(catalog._REDACTED.sub(" ", text)):
            return None
        owners = {holding[k][0].memory.key for k in known}
        if len(owners) != 1:
            return None
        entry = holding[known[0]][0]
        other = catalog.language_of(text) not in (None, catalog.language_of(entry.memory.text))
        return entry.memory if other and catalog.details_of(text) <= keys(entry.norm) else None

    def denying_a_name(self, text: str) -> Memory | None:
        """Every memory read: of those holding a name said beside a negation, the one sharing most words."""
        if not catalog.negation().search(text):
            return None
        said = catalog._REDACTED.sub(" ", text)
        names, content = catalog._written_as_name(said), keys(normalize(said))
        holding = [entry for entry, _ in self._entries() if names & keys(entry.norm)]
        if not holding:
            return None
        return min(holding, key=lambda e: (-len(content & keys(e.norm)), e.rank[:2])).memory

    def forget_match(self, query: str):
        wanted = forget_keys(query)
        scored = []
        for entry, text in self._entries():
            score = forget_score(wanted, keys(normalize(text)), keys(entry.norm)) if wanted else 0.0
            if score >= FORGET_MIN:
                scored.append((-score, entry.rank, entry))
        if not scored:
            return None, 0.0, []
        scored.sort(key=lambda s: s[:2])
        best = -scored[0][0]
        return scored[0][2], best, [e for s, _, e in scored[1:] if -s == best]

    def stating(self, wrong: str) -> list[Entry]:
        return [entry for entry, _ in self._entries() if entry.memory.kind == "topic"]

    def label(self, memory: Memory) -> str:
        return memory.label  # read just now, so a rule's line number is current

    def file_topic(self, path: str, line: str, type_: str = "") -> None:
        """Where the catalog puts it: after the line filed last for its type, else where `insert_at` says."""
        lines = self.ws.store.index_lines
        filed = self.__dict__.setdefault("filed", {}).setdefault(type_, [])
        while filed and filed[-1] not in lines:
            filed.pop()
        if filed:
            lines.insert(lines.index(filed[-1]) + 1, line)
        else:
            position = insert_at(lines, type_)
            lines.insert(position, line)
            if position:
                filed.append(lines[position - 1])
        filed.append(line)

    def refresh(self, path: str) -> None:
        pass

    def replace_line(self, old: str, new: str) -> None:
        lines = self.ws.store.index_lines
        lines[lines.index(old)] = new

    def rules_stating(self, needle: str) -> list[Entry]:
        return [entry for entry, _ in self._entries()
                if entry.memory.kind == "rule" and needle.lower() in entry.memory.text.lower()]

    def hooks_of(self, path: str) -> list[str]:
        return [line.text for line in self.ws.store.parsed_index()
                if line.kind == "link" and resolve_link(INDEX_NAME, line.target) == path]

    def was_forgotten(self, query: str) -> bool:
        wanted = forget_keys(query)
        return bool(wanted) and any(forget_score(wanted, named, frozenset()) >= FORGET_MIN
                                    for named in self.__dict__.get("forgotten", []))

    def remove(self, memory: Memory) -> None:
        store = self.ws.store
        if memory.kind == "topic":
            hooks = [f"{line.title} {line.hook}" for line in store.parsed_index()
                     if line.kind == "link" and resolve_link(INDEX_NAME, line.target) == memory.key]
            named = keys(normalize(forget_text(store.topics[memory.key], hooks)))
        else:
            named = keys(normalize(memory.text))
        self.__dict__.setdefault("forgotten", []).append(named)
        if memory.kind == "rule":
            store.index_lines.remove(memory.key)
            return
        store.index_lines[:] = [text for text in store.index_lines
                                if not any(resolve_link(INDEX_NAME, t) == memory.key
                                           for t in parse_index_line(text).links)]
        store.remove(memory.key)


# ---------------------------------------------------------------- generated stores


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(VOCABULARY, WEIGHTS, k=k)


def _vary(rng: random.Random, text: str) -> str:
    """A near-copy of `text`, as a person would repeat it: case, plural, a typo, a word more or less."""
    words = text.split()
    i = rng.randrange(len(words))
    kind = rng.randrange(5)
    if kind == 0:
        words[i] = words[i].upper()
    elif kind == 1:
        words[i] += "s"
    elif kind == 2 and len(words[i]) > 3:
        words[i] = words[i][:-2] + words[i][-1] + words[i][-2]
    elif kind == 3 and len(words) > 6:
        del words[i]
    else:
        words.insert(i, rng.choice(VOCABULARY[:6]))
    return " ".join(words)


def make_store(rng: random.Random, count: int) -> tuple[dict[str, bytes], list[tuple[str, str, str]], list[str]]:
    """Topics (some linked twice, on shared lines or not at all) and inline rules."""
    tree: dict[str, bytes] = {}
    index = ["# Memory", ""]
    facts, rules = [], []
    for i in range(count):
        name = f"topic_{i:04d}"
        ref = f"r{rng.getrandbits(24):x}"
        if facts and rng.random() < 0.05:
            ref = rng.choice(facts)[2]  # two files state the same value
        body = " ".join(_words(rng, rng.randint(8, 30)))
        facts.append((name, body, ref))
        description = f"note about {' '.join(_words(rng, 2))}"
        tree[f"{name}.md"] = (f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n"
                              f"{body}\nThe value is {ref} here.\n").encode()
        roll = rng.random()
        if roll < 0.05:
            continue  # no index line: an orphan until prune
        if roll < 0.12 and i:
            other = f"topic_{rng.randrange(i):04d}"
            index.append(f"- [{name}]({name}.md) — {description}, see [{other}]({other}.md)")
        else:
            index.append(f"- [{name}]({name}.md) — {description}")
        if rng.random() < 0.15:
            rule = f"Always {' '.join(_words(rng, 5))}"
            if rng.random() < 0.3:
                rule += f" (see [{name}]({name}.md))"
            index.append(f"- {rule}")
            rules.append(rule)
    tree["MEMORY.md"] = ("\n".join(index) + "\n").encode()
    return tree, facts, rules


def make_requests(rng: random.Random, facts: list[tuple[str, str, str]], rules: list[str], count: int,
                  named: bool = False) -> list[str]:
    """Requests of ten kinds; `named` ones each carry a word few memories have, as real ones do."""
    said: list[str] = []
    lines = []
    for n in range(count):
        kind = rng.randrange(10)
        name, body, ref = rng.choice(facts)
        if kind == 0 or not said:
            line = f"Remember that {' '.join(_words(rng, rng.randint(4, 12)))} {n}"
            said.append(line)
        elif kind == 1:
            line = rng.choice(said)
        elif kind == 2:
            line = _vary(rng, rng.choice(said))
        elif kind == 3:
            window = body.split()[: rng.randint(5, 12)]
            line = "Remember that " + _vary(rng, " ".join(window))
        elif kind == 4:
            line = f"Never {' '.join(_words(rng, rng.randint(3, 6)))}" + (f" on host{n}" if named else "")
        elif kind == 5:
            line = f"Forget about {name}"
        elif kind == 6 and named:
            line = f"Forget the {rng.choice(VOCABULARY)} dashboard{n}"
        elif kind == 6:
            line = f"Forget the {' '.join(_words(rng, rng.randint(1, 3)))}"
        elif kind == 7:
            line = f"Forget {_vary(rng, ' '.join(body.split()[:4]))}"
        elif kind == 8 and rules:
            line = f"Forget {rng.choice(rules).split(' (see')[0]}"
        else:
            line = f"Actually, the value for {body.split()[0]} is r{rng.getrandbits(24):x}, not {ref}"
        lines.append(line)
    return lines


def sessions(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"session": [f"s{n // 7}" for n in range(len(lines))],
                         "date": [date(2026, 3, 1 + n * 7 // len(lines)) for n in range(len(lines))],
                         "seq": list(range(len(lines))), "role": ["user"] * len(lines), "text": lines},
                        schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64,
                                "role": pl.Utf8, "text": pl.Utf8})


def run_engine(tmp_path: Path, tree: dict[str, bytes], lines: list[str]):
    staging = tmp_path / "staging"
    materialize(tree, staging)
    inp = EngineInput(tmp_path, Staging(staging), sessions(lines), [], Settings(), TODAY)
    result = OfflineEngine().consolidate(inp)
    return read_tree(staging), result


# ---------------------------------------------------------------- the quick filter

EVERY_LEAD = [
    "Forget about the old cluster", "please forget that we use tox", "olvida que usamos tox",
    "Olvídate de la VPN", "oublie le serveur", "Vergiss dass wir tox nutzen", "Забудь про старый кластер",
    "忘记旧集群", "忘掉旧集群", "忘了旧集群", "Remember: staging is eu-west-1", "keep in mind that CI is slow",
    "recuerda que el servidor está en Madrid", "Recuérdalo: puerto 5433", "souviens-toi que CI est lent",
    "rappelle-toi de la VPN", "merk dir das Passwort-Tool", "Merke dir: port 5433", "ЗАПОМНИ что порт 5433",
    "lembre-se que os testes são lentos", "ricorda che la CI è lenta", "记住：周五不部署", "请记住周五不部署",
    "记一下周五不部署", "覚えておいて金曜はデプロイしない", "기억해 금요일 배포 금지",
    "Actually, the port is 5433, not 5432", "correction: staging is eu-west-1, not us-east-1",
    "that's wrong: it is 5433", "That is wrong - it is 5433", "that's not right, it is 5433",
    "No, the port is 5433", "ALWAYS run the linter", "never push to main", "Don't use emoji",
    "dont use emoji", "do not use emoji",
    "実はポートは5432じゃなくて5433です", "訂正：ステージングは eu-west-1 です", "いや、ポートは5433です",
    "사실 포트는 5433이에요", "사실은 포트가 5433이에요", "정정: 포트는 5433", "其实端口是5433", "更正：端口是5433",
    "纠正：端口是5433", "不对，端口是5433", "数据库从 Postgres 15 升级到 Postgres 16 了",
    "CIを Node 18 から Node 22 に変更しました", "패키지 매니저를 npm에서 pnpm으로 바꿨어요",
]


@pytest.mark.parametrize("said", EVERY_LEAD)
def test_the_quick_filter_keeps_every_kind_of_request(said):
    found = gather_requests(sessions([f"ok. {said}."]))
    assert extract(said) is not None
    assert [(r.kind, r.text) for r in found] == [extract(said)]


# ---------------------------------------------------------------- pasted lines


def test_a_rule_in_lines_pasted_below_the_typed_line_is_the_pasted_texts_not_a_request():
    entry = "this is what the guide says, do we enforce it?\n  Always run `make lint` before you push.\n  Never commit to main."
    assert gather_requests(sessions([entry])) == []


@pytest.mark.parametrize("typed, heading", [
    ("remember this, it's our release checklist now:", "it's our release checklist now: "),
    ("Recuerda lo siguiente:", ""),
])
def test_a_remember_that_points_at_the_lines_below_keeps_them(typed, heading):
    [request] = gather_requests(sessions([f"{typed}\n  1. tag the release\n  2. run the smoke tests"]))
    assert (request.kind, request.plain) == ("remember", True)
    assert request.text == f"{heading}1. tag the release; 2. run the smoke tests"


def test_a_remember_of_this_with_nothing_below_is_not_filed():
    [request] = gather_requests(sessions(["remember this"]))
    assert (request.kind, request.plain) == ("remember", False)


# ---------------------------------------------------------------- same answers


# Each case is applied twice, and the reference rereads the whole index for every memory it
# looks at: 200 memories and 300 requests take it half a minute of CPU. The default run has a
# smaller store; the slow run has the full size.
@pytest.mark.parametrize("seed, memories, requests", [
    (1, 100, 150),
    pytest.param(2, 200, 300, marks=pytest.mark.slow),
    pytest.param(3, 200, 300, marks=pytest.mark.slow),
])
def test_catalog_gives_the_answers_of_rereading_the_store(seed, memories, requests, tmp_path, monkeypatch):
    rng = random.Random(seed)
    tree, facts, rules = make_store(rng, memories)
    lines = make_requests(rng, facts, rules, requests)
    out, result = run_engine(tmp_path / "catalog", tree, lines)
    monkeypatch.setattr(consolidate, "Catalog", BruteCatalog)
    brute_out, brute = run_engine(tmp_path / "brute", tree, lines)
    assert result.changes == brute.changes
    assert result.summary == brute.summary
    assert out == brute_out
    done = Counter(c.action for c in result.changes)
    # The data exercises every path: filed, already covered, forgotten, corrected, and not found.
    assert min(done["created"], done["forgotten"], done["updated"]) >= 10, done
    assert result.summary.count("already covered by") >= 10  # known already: a note, no change
    # Rules forgotten after other lines went: the report names their line as it stands then.
    assert sum(c.action == "forgotten" and c.path == "MEMORY.md" for c in result.changes) >= 3
    assert "no memory matches" in result.summary and "several memories match" in result.summary


# ---------------------------------------------------------------- linear work

COUNTED = {"normalize": normalize, "parse_index_line": parse_index_line}
SCORERS = ("ratio", "partial_ratio", "token_set_ratio")


def count_calls(monkeypatch) -> Counter:
    """Count calls of the normalizer, the index-line parser and the rapidfuzz scorers made
    while requests are applied (prune's passes over the index are linear, but jump once
    the index goes over budget)."""
    counts: Counter = Counter()
    applying = [False]

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            counts[name] += applying[0]
            return fn(*args, **kwargs)
        return wrapper

    def apply_requests(*args):
        applying[0] = True
        try:
            return real_apply(*args)
        finally:
            applying[0] = False

    real_apply = consolidate.apply_requests
    monkeypatch.setattr(consolidate, "apply_requests", apply_requests)
    for module in [m for name, m in sys.modules.items() if name.startswith("dream.")]:
        for name, fn in COUNTED.items():
            if getattr(module, name, None) is fn:
                monkeypatch.setattr(module, name, counting(name, fn))
    for name in SCORERS:
        monkeypatch.setattr(fuzz, name, counting(name, getattr(fuzz, name)))
    assert model.parse_index_line is not parse_index_line  # the store model's own calls count too
    return counts


def work(tmp_path: Path, monkeypatch, topics: int, requests: int) -> tuple[int, int, int]:
    """(index parses + normalizations, rapidfuzz scores, memories at the end) for one engine run."""
    rng = random.Random(7)
    tree, facts, rules = make_store(rng, topics)
    lines = make_requests(rng, facts, rules, requests, named=True)
    with monkeypatch.context() as patch:
        counts = count_calls(patch)
        out, _ = run_engine(tmp_path / f"{topics}-{requests}", tree, lines)
    reads = sum(counts[name] for name in COUNTED)
    return reads, sum(counts[name] for name in SCORERS), len(out)


def assert_linear(small: tuple[int, int, int], double: tuple[int, int, int], requests: int) -> None:
    # Reading: each request normalizes and parses a few strings of its own, and the
    # catalog reads the store once. Re-reading the store per request was quadratic.
    assert double[0] <= 2.2 * small[0], (small, double)
    # Scoring: only candidates that share a rare enough word. Their number grows with
    # the store until the per-word cap (similarity.MAX_BLOCK) is reached, so it is
    # bounded against scoring every memory for every request, not by a ratio.
    assert double[1] <= 0.1 * requests * double[2], (small, double)


def test_work_grows_linearly_with_requests_and_memories(tmp_path, monkeypatch):
    small = work(tmp_path, monkeypatch, 150, 150)
    double = work(tmp_path, monkeypatch, 300, 300)
    assert_linear(small, double, 300)


def test_work_grows_linearly_with_repeated_requests_on_a_small_store(tmp_path, monkeypatch):
    # One long log: the store is small, but every filed request is a memory the next ones check.
    small = work(tmp_path, monkeypatch, 20, 200)
    double = work(tmp_path, monkeypatch, 20, 400)
    assert_linear(small, double, 400)


@pytest.mark.parametrize("answer", ["yes, remember that", "はい、覚えておいて", "ja, merk dir das", "ok"])
def test_an_answer_to_the_assistants_offer_is_not_the_users_memory(answer):
    offer = "Want me to remember that the VPN is needed for staging deploys?"
    log = pl.DataFrame({"session": ["s1", "s1"], "date": [date(2026, 3, 1)] * 2, "seq": [0, 1],
                        "role": ["assistant", "user"], "text": [offer, answer]})
    found = gather_requests(log)
    assert [(r.plain, r.answers) for r in found] == ([(False, offer)] if answer != "ok" else [])


@pytest.mark.parametrize("said", ["nunca entiendo por qué falla en CI", "Immer das Gleiche mit diesem Test",
                                  "nie weiß man, ob es am Netz liegt"])
def test_a_habit_or_complaint_told_with_always_or_never_is_no_plain_rule(said):
    hit = extract(said)
    assert hit is None


@pytest.mark.parametrize("said, code", [("Immer pnpm benutzen, niemals npm!", "de"), ("Use pnpm, never npm.", "en"),
                                        ("nunca despliegues los viernes", "es"), ("Запомни: 42", None)])
def test_the_language_of_a_text_is_read_from_its_small_words(said, code):
    from dream.engines.offline.phrases import language_of

    assert language_of(said) == code


@pytest.mark.parametrize("said, named", [("vergiss bitte die Deploy-Notiz", "die Deploy-Notiz"),
                                         ("Merk dir bitte: wir deployen nie am Freitag", "wir deployen nie am Freitag"),
                                         ("olvida por favor la nota de deploys", "la nota de deploys")])
def test_please_after_the_lead_is_not_part_of_what_is_named(said, named):
    assert extract(said)[1] == named


@pytest.mark.parametrize("amendment, plain", [
    ("sorry, I meant 5433", False),
    ("*5433", False),
    ("äh, ich meinte 5433", False),  # not a line the quick filter keeps: read because it follows a request
    ("perdón, quise decir 5433", False),
    ("5433の間違い", False),
    ("thanks!", True),
    ("I meant to tell you yesterday", True),
])
def test_a_request_amended_on_the_next_line_goes_to_a_person(amendment, plain):
    found = gather_requests(sessions(["remember the staging db is on port 5432", amendment]))
    assert [(r.text, r.plain) for r in found] == [("the staging db is on port 5432", plain)]


@pytest.mark.parametrize("follow_up, plain", [
    ("hmm idk actually", False),
    ("jk", False),
    ("should we keep the cache bit though?", False),  # a short question right after it
    ("стой, подожди", False),
    ("boh, non so", False),
    ("あ、待って", False),
    ("actually, the proxy moved to 3129 too", True),  # news after it, not a doubt about it
    ("thanks, and please run the linter after that", True),
])
def test_a_forget_doubted_or_questioned_on_the_next_line_goes_to_a_person(follow_up, plain):
    found = gather_requests(sessions(["forget the proxy note", follow_up]))
    assert [(r.kind, r.plain) for r in found][:1] == [("forget", plain)]


@pytest.mark.parametrize("said", ["forget the proxy note, but keep the part about the port",
                                  "forget the proxy note... actually keep it"])
def test_a_forget_kept_in_part_or_whole_on_its_own_line_goes_to_a_person(said):
    found = gather_requests(sessions([said]))
    assert [(r.kind, r.plain) for r in found] == [("forget", False)]


@pytest.mark.parametrize("said", ['"""Remember the offset so the next page starts there."""',
                                  "note that the lint job is failing on CI", "keep in mind the runners are slow today",
                                  "WARN cache: forgetting 12 keys",
                                  "always redis that crashes first", "a partir de ahora el build tarda 9 minutos",
                                  "总是这个超时，烦死了", "デプロイするの忘れないで"])
def test_code_logs_statuses_and_complaints_that_hold_a_request_word_ask_for_nothing(said):
    assert extract(said) is None
