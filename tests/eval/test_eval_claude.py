"""`dream eval --engine claude` runs the same cases through the same pipeline, here against the test server.

The test server's model changes nothing ("nothing to change"), so what passes
is what the pipeline's deterministic finish does for any engine (pointers),
and what needs the model (a forget request) fails: the scorecard tells them apart.
"""

from __future__ import annotations

from pathlib import Path

from dream.eval import evaluate
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, text  # noqa: F401  (fixture)

CASES = """
category: {category}
cases:
  - id: {category}-case
    store:
      MEMORY.md: |
        - [Jenkins](reference_jenkins.md) — old CI
        - [Tests](feedback/feedback_tests.md) — run make test
      reference_jenkins.md: |
        ---
        name: Jenkins
        description: old CI
        type: reference
        ---
        Builds ran on jenkins.internal.
      feedback_tests.md: |
        ---
        name: Tests
        description: run make test
        type: feedback
        ---
        Run make test.
    logs:
      - date: 2026-11-20
        text: |
          > forget about Jenkins
    expect:
      - {check}
"""


def write_cases(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pointers.yaml").write_text(CASES.format(category="pointers", check="pointers_ok: true"))
    (folder / "forget.yaml").write_text(CASES.format(category="forget", check="gone: reference_jenkins.md"))
    return folder


def test_claude_engine_runs_the_cases_through_the_pipeline(fake_api: FakeAnthropic, tmp_path):
    fake_api.play(*[Reply([text("I read the memory and the logs; nothing to change.")]) for _ in range(20)])
    card = evaluate(write_cases(tmp_path / "cases"), "claude")
    assert card.engine == "claude"
    assert len(fake_api.requests) >= 2 and fake_api.protocol_errors == []  # one dream per case, at least
    scores = card.to_json()["categories"]
    assert scores["pointers"]["passed"] == 1  # the deterministic finish repairs the moved file's link
    assert scores["forget"]["passed"] == 0  # the model did nothing, and the eval says so


def test_claude_engine_without_a_key_is_one_clear_error(cli, tmp_path):
    result = cli("eval", "--engine", "claude", "--cases", str(write_cases(tmp_path / "cases")))
    assert result.code == 2 and "the claude engine needs ANTHROPIC_API_KEY" in result.stderr and "Traceback" not in result.stderr
