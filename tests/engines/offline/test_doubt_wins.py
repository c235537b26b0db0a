"""When intent is not certain the offline engine changes nothing: a relative date inside a longer one, a
remember that points back, a request narrowed or withdrawn by a later line (issue 36, the blind set's
wrong-prone phenomena; wording and values of their own)."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from dream.engines.offline import dates
from dream.engines.offline.phrase_schema import check
from dream.engines.offline.similarity import names_a_fact
from dream.errors import BadInput
from helpers.offline_engine import indexed, run, sessions

FRIDAY, SATURDAY = date(2026, 5, 15), date(2026, 5, 16)
TREE = indexed(
    ("reference_queue.md", "Queue", "jobs queue on rabbit-3:5672", "reference", "Jobs queue on rabbit-3:5672."),
    ("feedback_lint.md", "Lint", "lint with ruff before pushing", "feedback", "Lint with ruff before pushing."),
)


@pytest.mark.parametrize("said, left", [
    ("the audit starts three weeks from tomorrow", "tomorrow"),
    ("freeze from next week Thursday", "next week"),
    ("the vendor call is tomorrow week", "tomorrow"),
    ("다음 주 목요일부터 동결", "다음 주"),
    ("来週の木曜から凍結", "来週"),
    ("下周的周四开始冻结", "下周"),
    ("over the last week the queue grew", "last week"),
    ("hoy en día usamos RabbitMQ", "hoy"),  # nowadays: no date at all
    ("hoje em dia usamos RabbitMQ", "hoje"),
])
def test_a_relative_date_inside_a_longer_one_is_left_as_written(said, left):
    text, rewritten, unresolved = dates.rewrite_line(said, FRIDAY)
    assert text == said and rewritten == []
    assert [u.phrase for u in unresolved] == [left]


def test_a_relative_date_in_a_path_is_never_rewritten():
    assert dates.rewrite_line("rotated logs live in /srv/logs/yesterday/", FRIDAY)[0] == (
        "rotated logs live in /srv/logs/yesterday/")


@pytest.mark.parametrize("text, fact", [
    ("the other one, not the flaky thing", False),
    ("das von vorhin", False),
    ("the rabbit thing", False),
    ("the thing about rabbit needing a restart after a deploy", True),
    ("the queue runs on rabbit-3", True),
])
def test_a_remember_that_points_back_names_no_fact(text, fact):
    assert names_a_fact(text) is fact


def _changed(tmp_path: Path, *lines: tuple[date, str]) -> list[str]:
    rows = [(f"s{day.day}", day, "assistant" if text.startswith("< ") else "user", text.removeprefix("< "))
            for day, text in lines]
    _, result = run(tmp_path, TREE, sessions(*rows))
    return sorted({c.path for c in result.changes})


@pytest.mark.parametrize("later", ["wait, don't", "やっぱり消さないで", "算了，别删", "nie usuwaj jednak"])
def test_a_bare_withdrawal_the_next_day_keeps_the_memory(tmp_path, later):
    assert _changed(tmp_path, (FRIDAY, "forget the queue note"), (SATURDAY, later)) == []


def test_a_later_forget_takes_back_a_remember_of_the_same_thing(tmp_path):
    assert _changed(tmp_path, (FRIDAY, "remember that rabbit-3 is drained every night"),
                    (SATURDAY, "forget what I said about rabbit-3 being drained")) == []


@pytest.mark.parametrize("second", ["only the port bit", "nein, nicht die, die andere", "quer dizer, só a parte do ruff",
                                    "1Passwordのところだけ"])
def test_a_second_line_that_narrows_a_forget_sends_it_to_a_person(tmp_path, second):
    assert _changed(tmp_path, (FRIDAY, "forget the queue note"), (FRIDAY, second)) == []


def test_a_pattern_kind_or_date_meaning_the_schema_does_not_know_fails_with_its_line():
    good = '[[pattern]]\nkind = "forget"\nregex = "x"\n\n[[dates.row]]\nregex = "y"\nmeans = "day"\nneeds = ["y"]\n'
    check(Path("xx.toml"), good, tomllib.loads(good))
    for bad, line in ((good.replace('"forget"', '"forgor"'), 2), (good.replace('"day"', '"days"'), 7)):
        with pytest.raises(BadInput, match=rf"xx.toml line {line}:"):
            check(Path("xx.toml"), bad, tomllib.loads(bad))
