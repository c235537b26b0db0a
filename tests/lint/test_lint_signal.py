"""The Claude engine gets lint's findings as signal in its first message (against the fake Messages API)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dream.engines.claude import ClaudeEngine
from dream.lint.signal import HEADER
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import FakeAnthropic, fake_api  # noqa: F401

STALE = "stale claim: testing.md:6: `tox.ini` is not in the tree at 1234abc; it was deleted in 1234abc"


def _first_message(fake: FakeAnthropic) -> str:
    content = fake.requests[0]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_the_first_message_carries_the_stale_claims(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(replace(engine_input(tmp_path), lint=[STALE]))
    first = _first_message(fake_api)
    assert HEADER in first and f"- {STALE}" in first
    assert "Never delete a memory for this alone" in first


def test_no_section_when_every_claim_held(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path))
    assert HEADER not in _first_message(fake_api)
