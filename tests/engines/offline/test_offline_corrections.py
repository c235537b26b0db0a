"""Corrections said in Chinese, Japanese and Korean: the stale value, the new one, and where they stand.

Values in these languages often sit inside the text with no space around
them ("16になりました", "6380이에요"); a boundary between scripts counts as one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dream.engines.offline.corrections import _standing_alone, about, parse, states
from dream.engines.offline.similarity import CJK_CHARS
from dream.engines.offline.requests import extract

SAID = [
    ("本番DBはもうPostgres 15じゃなくて16になりました", "15", "16"),
    ("ステージングは stage.acme.io ではなく staging.acme.dev です", "stage.acme.io", "staging.acme.dev"),
    ("レディスのポートは6379ではなくて6380", "6379", "6380"),
    ("레디스 포트는 6379가 아니라 6380이에요", "6379", "6380"),
    ("빌드는 Node 18 말고 Node 22로 돌아가요", "18", "22"),
    ("API 端口不是 8080，是 8081", "8080", "8081"),
    ("API 端口是 8081，不是 8080", "8080", "8081"),
    ("前端已经从 npm 换成 pnpm 了", "npm", "pnpm"),
    # a number replaces a number: not "Port", the word after the last "auf"
    ("der Dev-Server läuft jetzt auf Port 3000, nicht mehr auf 8080", "8080", "3000"),
]


@pytest.mark.parametrize("text, wrong, value", SAID)
def test_the_stale_and_the_new_value_are_found(text, wrong, value):
    correction = parse(text)
    assert correction is not None
    assert (correction.wrong, correction.value) == (wrong, value)


CHANGED = [  # said in passing, with no lead word: the new value must look like the old one
    ("CIのビルドを Node 18 から Node 22 に変更しました", "Node 18", "Node 22"),
    ("웹앱 패키지 매니저를 npm에서 pnpm으로 바꿨어요", "npm", "pnpm"),
    ("生产数据库已经从 Postgres 15 升级到 Postgres 16 了", "15", "16"),
]


@pytest.mark.parametrize("text, wrong, value", CHANGED)
def test_a_change_said_in_passing_is_read_strictly(text, wrong, value):
    assert extract(text) == ("update", text)
    correction = parse(text, strict=True)
    assert correction is not None and (correction.wrong, correction.value) == (wrong, value)


def test_a_change_to_an_unlike_value_said_in_passing_is_not_taken():
    assert parse("CIのビルドを 18 から 22 に変更しました", strict=True) is None  # "22" is not like "18"
    assert parse("CIのビルドを 18 から 22 に変更しました") is not None  # said as a correction, it is


def test_a_value_glued_to_a_particle_is_still_stated():
    correction = parse("레디스 포트는 6379가 아니라 6380이에요")
    assert states("Redis는 6379를 사용한다", correction)
    assert states("ポートは6379です", correction)
    assert not states("port 63790 is unrelated", correction)  # part of a longer number
    assert not states("(was 6379 until 2026-11-20)", correction)  # history, not a current statement


def test_another_script_cannot_say_what_a_correction_is_about_but_a_shared_word_can():
    korean = parse("레디스 포트는 6379가 아니라 6380이에요")
    assert about("Redis runs on port 6379", korean)  # nothing comparable: the value decides
    node = parse("빌드는 Node 18 말고 Node 22로 돌아가요")
    assert about("CI builds the app on Node 18", node)
    assert not about("We pin Python 18 in the data images", node)  # "Node" was said, and is not there
    japanese = parse("ステージングは stage.acme.io ではなく staging.acme.dev です")
    assert about("ステージング環境は stage.acme.io で動いている", japanese)
    assert not about("本番環境は stage.acme.io を参照しない", japanese)


def test_a_sentence_without_a_negation_or_a_change_is_not_a_correction():
    assert parse("実はこのバグは先週から出ていました") is None
    assert parse("其实我们还没决定") is None


# Where a value stands alone, written as one regex: not after a dot, slash or hyphen, nor before a slash or a
# dot or hyphen that goes on ("db-a" in "db-a.internal"), nor beside a letter or digit of a script that spaces
# its words (a CJK character beside it is a boundary).
_SPACED_WORD = rf"[^\W{CJK_CHARS}]"
VALUES = ["15", "Node 18", "东京", "redis", "3.11", "ſtop", "カ", "한국"]
TEXT = st.lists(st.sampled_from(list("ab15 .8_-東京东京カタ한국・ー") + ["Node 18", "node 18.2", "REDIS", "3.11", "STOP"]),
                max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VALUES), st.booleans(), TEXT)
def test_a_value_stands_alone_where_one_regex_with_the_cjk_ranges_says(value, versioned, text):
    value_regex = re.escape(value) + (r"(?:\s+v?\d+(?:\.\d+)*)?" if versioned else "")
    written = re.compile(rf"(?<![./-])(?<!{_SPACED_WORD})(?i:{value_regex})(?!{_SPACED_WORD}|/|[.-]{_SPACED_WORD})")
    alone = _standing_alone(value_regex)
    assert alone.search(text) == bool(written.search(text))
    assert alone.sub(lambda found: f"<{found}>", text) == written.sub(lambda m: f"<{m.group(0)}>", text)
