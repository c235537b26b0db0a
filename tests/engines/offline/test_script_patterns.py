"""Patterns of the CJK ranges are compiled only for a text that may hold such a character, and answer as re does."""

from __future__ import annotations

import re

import pytest

from dream.engines.offline.similarity import CJK_CHARS, CJK_FLOOR
from dream.engines.offline.text import ScriptPattern

EDGE = rf"(?<=[^\W{CJK_CHARS}])(?=[{CJK_CHARS}])|(?<=[{CJK_CHARS}])(?=[^\W{CJK_CHARS}])"
TEXTS = ["always squash before merge", "", "deploy — port 5433 … “quoted”", "VPNのメモを更新", "把VPN的端口改成 5433",
         "메모 ✓ 완료", "Привет, remember the port"]


@pytest.mark.parametrize("text", TEXTS)
def test_answers_as_re_does(text: str) -> None:
    lazy, eager = ScriptPattern(EDGE, CJK_FLOOR), re.compile(EDGE)
    assert lazy.sub(" ", text) == eager.sub(" ", text)
    assert bool(lazy.search(text)) == bool(eager.search(text))
    runs = ScriptPattern(f"[{CJK_CHARS}]+", CJK_FLOOR)
    assert runs.findall(text) == re.findall(f"[{CJK_CHARS}]+", text)
    assert bool(runs.match(text)) == bool(re.match(f"[{CJK_CHARS}]+", text))


def test_a_latin_text_compiles_nothing() -> None:
    pattern = ScriptPattern(f"[{CJK_CHARS}]", CJK_FLOOR)
    assert pattern.search("deploy — port 5433 … “quoted”") is None
    assert "compiled" not in vars(pattern)  # cached_property: set on first use only
    assert pattern.search("VPNのメモ") is not None
