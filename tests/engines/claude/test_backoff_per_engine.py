"""One failed model run backs off the model engine only, and the skip says how to run anyway."""

from __future__ import annotations

from pathlib import Path

from helpers.fake_anthropic import FakeAnthropic, HttpError, fake_api  # noqa: F401


def test_a_failed_claude_run_does_not_back_off_the_offline_engine(demo_store: Path, cli,
                                                                  fake_api: FakeAnthropic) -> None:  # noqa: F811
    fake_api.play(HttpError(529, "overloaded_error", "Overloaded", times=99))
    failed = cli("run", "--store", str(demo_store), "--engine", "claude", "--json")
    assert failed.code == 1 and failed.json["status"] == "failed"

    claude_again = cli("run", "--store", str(demo_store), "--engine", "claude", "--json")
    assert (claude_again.json["status"], claude_again.json["reason"]) == ("skipped", "backoff")
    assert "claude" in claude_again.json["error"] and "--force" in claude_again.json["error"]

    offline = cli("run", "--store", str(demo_store), "--engine", "offline", "--json")
    assert offline.code == 0, offline.stderr
    assert offline.json["status"] == "proposed"


def test_force_is_documented_in_the_help(cli) -> None:
    shown = cli("run", "--help")
    assert "--force" in shown.stdout and "backoff" in shown.stdout
