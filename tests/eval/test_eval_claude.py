"""`dream eval --engine claude` runs the same cases through the same pipeline, here against the test server.

The test server's model changes nothing ("nothing to change"), so what passes
is what the pipeline's deterministic finish does for any engine (pointers),
and what needs the model (a forget request) fails: the scorecard tells them apart.
"""

from __future__ import annotations

from pathlib import Path

from dream.eval import evaluate
from helpers.eval_cases import jenkins_case
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, text  # noqa: F401  (fixture)


def write_cases(folder: Path) -> Path:
    folder.mkdir()
    moved = "feedback/feedback_tests.md"  # a link to where the file is not: the finish repairs it
    (folder / "pointers.yaml").write_text(jenkins_case("pointers", ["pointers_ok: true"], tests_link=moved))
    (folder / "forget.yaml").write_text(jenkins_case("forget", ["gone: reference_jenkins.md"], tests_link=moved))
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
