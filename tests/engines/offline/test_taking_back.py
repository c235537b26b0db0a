"""What people say around a request: asking *not* to keep something, taking a request back, saying
again what a memory already says in other words, and corrections whose values sit behind a preposition
or before a closing particle. Each is a place where reading too eagerly writes a wrong memory."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from dream.engines.offline import corrections
from dream.engines.offline.requests import gather_requests, read

SCHEMA = {"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8}


def said(*lines: tuple[str, str]) -> pl.DataFrame:
    """One session's lines as (role, text), in order."""
    return pl.DataFrame({"session": ["s1"] * len(lines), "date": [date(2026, 11, 20)] * len(lines),
                         "seq": list(range(len(lines))), "role": [r for r, _ in lines],
                         "text": [t for _, t in lines]}, schema=SCHEMA)


@pytest.mark.parametrize("sentence", [
    "don't save any of this to memory, it's a one-off experiment",
    "no need to remember that, it was a test",
    "please don't put this in your memory",
    "Bitte nicht speichern, das war nur ein Test",
    "ne retiens pas ça, c'est temporaire",
    "no guardes esto, es solo una prueba",
    "não salve isso, é só um teste",
    "non salvare questo, è solo una prova",
    "не запоминай это, это просто тест",
    "Nie zapisuj tego, to tylko test.",
    "onthoud dit niet, het is maar een test",
    "これは覚えなくていいよ",
    "这个不用记",
    "이건 기억하지 마",
])
def test_asking_not_to_keep_something_is_no_request(sentence):
    assert read(sentence) is None


@pytest.mark.parametrize("sentence", [
    "Nie wiem, co się stało",  # "I don't know": starts like the German rule lead "nie"
    "Nie działa po restarcie",
    "vergeet niet om te pushen",  # a task
])
def test_everyday_polish_and_dutch_start_no_rule(sentence):
    assert read(sentence) is None


def test_a_request_taken_back_in_the_same_line_goes_to_a_person():
    found = gather_requests(said(("user", "from now on always use table-driven tests... actually no, scratch "
                                          "that, I'll decide later")))

    assert [(r.kind, r.plain) for r in found] == [("rule", False)]


def test_a_request_taken_back_in_the_next_line_goes_to_a_person():
    for taken_back in ("never mind, I'm not sure about that", "hmm wait, never mind."):
        found = gather_requests(said(("user", "remember that the staging DB is reset every Sunday"),
                                     ("assistant", "Noted."),
                                     ("user", taken_back)))
        assert [(r.kind, r.plain) for r in found] == [("remember", False)], taken_back


def test_a_retraction_said_much_later_takes_nothing_back():
    lines = [("user", "remember that the staging DB is reset every Sunday")]
    lines += [("assistant", "Working on it."), ("user", "ok, run the tests")] * 3
    lines += [("user", "never mind, the tests are fine")]

    assert [(r.kind, r.plain) for r in gather_requests(said(*lines))] == [("remember", True)]


@pytest.mark.parametrize("sentence, kind", [
    ("please forget that every PR needs two approvals, one is enough now", "forget"),  # "forget that" + more: asks
    ("never mind the warning, it's from a dependency", None),  # small talk, and nothing before it
    ("scratch that", None),
    ("算了", None),
])
def test_a_retraction_phrase_asks_for_nothing_itself_but_forget_that_x_still_asks(sentence, kind):
    hit = read(sentence)
    assert (hit[0] if hit else None) == kind


@pytest.mark.parametrize("text, wrong, value", [
    ("Staging deployt jetzt von main, nicht mehr von develop", "develop", "main"),
    ("数据库现在是 MySQL 8.4，不是 8.0 了", "8.0", "8.4"),
    ("we are on AWS now, no en Heroku", "Heroku", "AWS"),
])
def test_the_values_of_a_correction_leave_out_prepositions_and_particles(text, wrong, value):
    found = corrections.parse(text)

    assert found is not None and (found.wrong, found.value) == (wrong, value)


def _dream(tmp_path, line: str) -> tuple[dict[str, bytes], list[str]]:
    from dream.config import Settings
    from dream.engines.base import EngineInput
    from dream.store.staging import Staging
    from dream.engines.offline import OfflineEngine
    from dream.store.tree import materialize, read_tree

    tree = {"MEMORY.md": b"- [Freeze](project_freeze.md) - the release freeze starts on Friday\n",
            "project_freeze.md": b"---\nname: Freeze\ndescription: the release freeze starts on Friday\n"
                                 b"type: project\n---\nThe release freeze starts on Friday, only bug fixes after "
                                 b"that, and Node 18 stays pinned.\n"}
    staging = tmp_path / "staging"
    materialize(tree, staging)
    result = OfflineEngine().consolidate(
        EngineInput(tmp_path, Staging(staging), said(("user", line)), [], Settings(), date(2026, 11, 21)))
    return read_tree(staging), [c.action for c in result.changes]


def test_a_memory_said_again_in_other_words_is_not_filed_twice(tmp_path):
    after, actions = _dream(tmp_path, "remember that the release freeze starts on Friday; only bug fixes then")

    assert "created" not in actions and set(after) == {"MEMORY.md", "project_freeze.md"}


@pytest.mark.parametrize("line", [
    "remember that the release freeze starts on Monday; only bug fixes then",  # another day: new information
    "remember that Node 20 stays pinned after the release freeze",  # another number
])
def test_other_words_with_another_name_or_number_are_new_information(tmp_path, line):
    _, actions = _dream(tmp_path, line)

    assert "created" in actions


@pytest.mark.parametrize("then", [
    "ugh ignore that, I was thinking of the web team",
    "ay no, olvida eso, me confundí de equipo",
    "ach nee, vergiss das wieder, das war das Web-Team",
    "non attends, oublie ça",
    "あ、やっぱ今のなし。Webチームの話だった",
    "arre, rehne do, woh dusri team ka tha",
])
def test_a_request_taken_back_behind_an_interjection_goes_to_a_person(then):
    requests = gather_requests(said(("user", "remember that releases ship on Fridays now"), ("user", then)))
    assert [(r.kind, r.plain) for r in requests][:1] == [("remember", False)]


@pytest.mark.parametrize("sentence, kind", [
    ("vergiss bloß nicht: der Staging-Build braucht das VPN", "remember"),
    ("vergiss ja nicht, dass Releases donnerstags rausgehen", "remember"),
    ("no te olvides de que Priya es la dueña de pagos", "remember"),
    ("n'oublie surtout pas qu'on lint avec flake8", "remember"),
])
def test_dont_forget_with_a_particle_is_never_a_forget(sentence, kind):
    assert (read(sentence) or ("nothing",))[0] == kind


@pytest.mark.parametrize("text, wrong, value", [
    ("lint는 이제 ruff로 해, flake8 말고", "flake8", "ruff"),        # the negation after the stale value
    ("API ab api.internal:7100 pe hai, 7000 nahi", "7000", "7100"),  # Hinglish, the same order
    ("the API is at api.internal:7100 now, not 7000", "7000", "7100"),  # a port inside an address
    ("le linter c'est ruff maintenant, plus flake8", "flake8", "ruff"),  # two alike readings: the last said
])
def test_where_the_new_value_stands(text, wrong, value):
    found = corrections.parse(text)
    assert found is not None and (found.wrong, found.value) == (wrong, value)


def test_two_alike_readings_with_neither_said_last_give_no_value():
    # "linter" or "ruff" for "flake8", and a word of the same script after both: a guess, so no correction
    assert corrections.align("flake8", "the linter or ruff in CI") == ""


@pytest.mark.parametrize("sentence, kind, text", [
    ("also forget the LaunchDarkly note, we dropped flags", "forget", "the LaunchDarkly note"),
    ("Und vergiss die Notiz zu LaunchDarkly.", "forget", "die Notiz zu LaunchDarkly"),
    ("y recuerda que los builds de iOS corren en Bitrise", "remember", "los builds de iOS corren en Bitrise"),
    ("あとLaunchDarklyのメモは忘れて", "forget", "LaunchDarkly"),
])
def test_a_request_joined_to_the_one_before_is_read(sentence, kind, text):
    assert read(sentence) == (kind, text, True)


@pytest.mark.parametrize("sentence", [
    "I remember we had this exact bug last spring",  # not Polish "i" ("and") before a lead
    "En realidad el frontend usa pnpm ahora, no yarn.",  # a correction lead, not Dutch "en"
])
def test_a_joining_word_is_only_taken_off_when_the_sentence_asks_nothing_without_it(sentence):
    hit = read(sentence)
    assert hit is None or hit[0] == "correction"


@pytest.mark.parametrize("sentence, plain", [
    ("don't forget the changelog", False),  # a reminder for the task as often as a fact
    ("n'oublie pas le changelog", False),
    ("don't forget that the API is at api.internal:7000", True),
    ("don't forget: the API is at api.internal:7000", True),
])
def test_dont_forget_says_a_fact_only_with_that_or_a_colon(sentence, plain):
    hit = read(sentence)
    assert hit is not None and hit[0] == "remember" and hit[2] is plain
