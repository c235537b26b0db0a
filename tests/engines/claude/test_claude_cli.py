"""`dream run --engine claude` through the real command, against the fake Messages API."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fake_anthropic import (  # noqa: F401
    Drop,
    FakeAnthropic,
    HttpError,
    Reply,
    fake_api,
    memory,
    overloaded,
    text,
    tool_use,
)


def index_line(store: Path, target: str) -> str:
    (line,) = [l for l in (store / "MEMORY.md").read_text().splitlines(keepends=True) if f"]({target})" in l]
    return line


def demo_script(store: Path) -> tuple[list[Reply], dict[str, str | None]]:
    """Merge the two duplicate pairs of the demo, fix its one over-long index line; return the expected files."""
    small_prs = index_line(store, "feedback_small_prs.md")
    short_prs = "- [Small PRs](feedback_small_prs.md) — under ~400 lines; refactor first, behaviour change after\n"
    index = (store / "MEMORY.md").read_text()
    new_index = (index.replace(index_line(store, "webhook_retries.md"), "")
                 .replace(index_line(store, "feedback_test_before_push.md"), "")
                 .replace(small_prs, short_prs))
    script = [
        Reply([memory("view", path="/memories"), tool_use("list_sessions")]),
        Reply([memory("view", path="/memories/webhook_retries.md"),
               memory("view", path="/memories/feedback_test_before_push.md"),
               tool_use("search_logs", pattern="webhook|make test")]),
        Reply([memory("delete", path="/memories/webhook_retries.md"),
               memory("delete", path="/memories/feedback_test_before_push.md")]),
        Reply([memory("str_replace", path="/memories/MEMORY.md", old_str=index_line(store, "webhook_retries.md"),
                      new_str=""),
               memory("str_replace", path="/memories/MEMORY.md",
                      old_str=index_line(store, "feedback_test_before_push.md"), new_str=""),
               memory("str_replace", path="/memories/MEMORY.md", old_str=small_prs, new_str=short_prs)]),
        Reply([text("- merged webhook_retries.md into project_webhook_retries.md: same policy twice\n"
                    "- merged feedback_test_before_push.md into feedback_run_tests.md: same rule twice\n"
                    "- pruned MEMORY.md: dropped both duplicates, shortened the Small PRs line to 150 characters")]),
    ]
    expected = {"MEMORY.md": new_index, "webhook_retries.md": None, "feedback_test_before_push.md": None}
    return script, expected


def test_dream_run_with_the_claude_engine_proposes(demo_store: Path, cli, fake_api: FakeAnthropic) -> None:
    script, expected = demo_script(demo_store)
    before = {p: p.read_bytes() for p in demo_store.rglob("*") if p.is_file()}
    fake_api.play(*script)

    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")

    assert run.code == 0, run.stderr
    outcome = run.json
    assert outcome["status"] == "proposed", outcome
    assert outcome["engine"] == "claude" and outcome["usage"]["turns"] == 5
    assert fake_api.protocol_errors == [] and not any(r.get("is_error") for r in fake_api.tool_results())
    # the store itself is untouched until someone accepts
    assert {p: p.read_bytes() for p in before} == before
    diff = cli("diff", outcome["proposal_id"], "--store", str(demo_store), "--json").json
    # the model's files, plus the finish's: of the demo's two broken index pointers, one is repaired
    # (the file is under ops/) and one, to a file that is gone, gets it back from its index line
    assert sorted(diff["files_changed"]) == sorted([*expected, "kafka_consumer_lag.md"])
    assert "+- [On-call runbook](ops/oncall_runbook.md)" in diff["diff"]
    assert "-- [Webhook retry policy](webhook_retries.md)" in diff["diff"]
    assert "+- [Small PRs](feedback_small_prs.md) — under ~400 lines; refactor first, behaviour change after" in diff["diff"]

    history = cli("history", "--store", str(demo_store), "--json").json
    (last,) = [r for r in history["runs"] if r["proposal_id"] == outcome["proposal_id"]]
    # The run's totals are exactly what the API reported over its five replies. With the
    # prefix and the conversation cached, all input is cache reads and writes: the fake
    # reports 0 uncached input tokens, and the history must not invent or misfile any.
    sent = {key: sum(u[key] for u in fake_api.usages) for key in
            ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
    assert len(fake_api.usages) == 5 and sent["input_tokens"] == 0, sent
    assert sent["output_tokens"] > 0 and sent["cache_read_input_tokens"] > 0 and sent["cache_creation_input_tokens"] > 0
    assert (last["input_tokens"], last["output_tokens"], last["cache_read_tokens"], last["cache_creation_tokens"]) \
        == tuple(sent.values())
    assert last["turns"] == 5 and last["cost_usd"] > 0

    accepted = cli("accept", outcome["proposal_id"], "--store", str(demo_store), "--json")
    assert accepted.code == 0, accepted.stderr
    index = (demo_store / "MEMORY.md").read_text().splitlines()
    model_lines = [line for line in expected["MEMORY.md"].splitlines() if "oncall" not in line and "kafka" not in line]
    assert [line for line in index if line in model_lines] == model_lines
    assert "- [Kafka consumer lag](kafka_consumer_lag.md) — how to read consumer lag" in "\n".join(index)
    assert "how to read consumer lag on the ledger-events topic" in (demo_store / "kafka_consumer_lag.md").read_text()
    assert not (demo_store / "webhook_retries.md").exists()


def test_nothing_new_means_noop_without_an_api_call(demo_store: Path, cli, fake_api: FakeAnthropic) -> None:
    script, _ = demo_script(demo_store)
    fake_api.play(*script)
    assert cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json").json["status"] == "proposed"
    fake_api.play()  # any request now would get a 500
    again = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert again.json["status"] == "noop" and fake_api.requests == []


def test_an_api_that_keeps_failing_ends_the_run_failed(demo_store: Path, cli, fake_api: FakeAnthropic) -> None:
    before = {p: p.read_bytes() for p in demo_store.rglob("*") if p.is_file()}
    fake_api.play(HttpError(529, "overloaded_error", "Overloaded", times=99))
    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert run.code == 1 and run.json["status"] == "failed" and run.json["reason"] == "api"
    assert "529" in run.json["error"] and "Overloaded" in run.json["error"]
    assert run.json["proposal_id"] is None
    assert "Traceback" not in run.stderr, run.stderr
    after = {p: p.read_bytes() for p in demo_store.rglob("*") if p.is_file() and ".dream" not in p.parts}
    assert after == {p: b for p, b in before.items()}


def test_a_budget_passed_ends_the_run_failed_naming_it(demo_store: Path, cli, fake_api: FakeAnthropic) -> None:
    fake_api.play(*[Reply([memory("view", path="/memories")]) for _ in range(5)])
    (demo_store / ".dream").mkdir(exist_ok=True)
    (demo_store / ".dream" / "config.toml").write_text("max_turns = 2\n")
    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert run.json["status"] == "failed" and run.json["reason"] == "budget_turns"
    assert run.json["proposal_id"] is None and len(fake_api.requests) == 2


def test_no_key_exits_2_records_nothing_and_offline_runs_at_once(
    demo_store: Path, cli, monkeypatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    run = cli("run", "--store", str(demo_store), "--engine", "claude")
    assert run.code == 2 and "ANTHROPIC_API_KEY" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert cli("history", "--store", str(demo_store), "--json").json["runs"] == []  # no failure recorded
    # no backoff was started: the offline engine runs at once, without --force
    offline = cli("run", "--store", str(demo_store), "--engine", "offline", "--json")
    assert offline.code == 0 and offline.json["status"] == "proposed", offline.json


def test_a_reply_cut_off_mid_run_proposes_nothing_and_records_its_usage(
    demo_store: Path, cli, fake_api: FakeAnthropic
) -> None:
    script, _ = demo_script(demo_store)
    # the deletes went through, then the index rewrite is cut off by max_tokens, and so is its one retry
    fake_api.play(*script[:3], *[Reply(script[3].blocks, stop_reason="max_tokens")] * 2)
    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert run.code == 1 and run.json["status"] == "failed" and run.json["reason"] == "max_tokens"
    assert run.json["proposal_id"] is None
    assert cli("proposals", "--store", str(demo_store), "--json").json["proposals"] == []
    (last,) = cli("history", "--store", str(demo_store), "--json").json["runs"]
    assert last["turns"] == 5 and last["output_tokens"] > 0 and last["cost_usd"] > 0


FAULTS = {
    "max_tokens": ("max_tokens", lambda reply: [Reply(reply.blocks, stop_reason="max_tokens")] * 2),  # and its retry
    "refusal": ("refusal", lambda reply: [Reply([text("I can't help with that.")], stop_reason="refusal")]),
    "window": ("context", lambda reply: [Reply(reply.blocks, stop_reason="model_context_window_exceeded")]),
    "529": ("api", lambda reply: [overloaded(times=99)]),
    "dropped": ("api", lambda reply: [Drop(times=99)]),
}


@pytest.mark.parametrize("fault", [*FAULTS, "too_long"])
def test_no_fault_after_the_model_deleted_files_ever_proposes_a_partial_dream(
    demo_store: Path, cli, fake_api: FakeAnthropic, fault: str
) -> None:
    script, _ = demo_script(demo_store)
    before = {p: p.read_bytes() for p in demo_store.rglob("*") if p.is_file()}
    first_three = script[:3]  # they delete two files
    if fault == "too_long":
        # the third turn also searches every session: its result pushes the fourth request past the window
        first_three[2] = Reply([*script[2].blocks, tool_use("search_logs", pattern=".", max_hits=50)])
        reason, steps = "context", script[3:]
        fake_api.context_window = 10_700  # the third request is about 9,900 tokens, the fourth about 11,500
    else:
        reason, make = FAULTS[fault]
        steps = make(script[3])
    fake_api.play(*first_three, *steps)
    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert run.code == 1 and (run.json["status"], run.json["reason"]) == ("failed", reason), run.json
    assert run.json["proposal_id"] is None and run.json["usage"]["turns"] >= 3
    assert cli("proposals", "--store", str(demo_store), "--json").json["proposals"] == []
    after = {p: p.read_bytes() for p in demo_store.rglob("*") if p.is_file() and ".dream" not in p.parts}
    assert after == before


def test_a_scripted_reply_that_raises_fails_the_test_with_its_traceback_not_a_retried_server_error(
        demo_store: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a test's reply function used to be a dropped connection, a retry, then "script exhausted" (500)."""
    fake = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")

    def broken_reply(body: dict) -> Reply:
        return Reply([text(body["no-such-key"])])

    fake.play(broken_reply, Reply([text("never reached")]))
    try:
        run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    finally:
        with pytest.raises(KeyError, match="no-such-key") as raised:
            fake.stop()
    assert run.code != 0 and "scripted reply raised KeyError" in run.stdout + run.stderr
    assert len(fake.requests) == 1 and len(fake.script) == 1  # not retried: the next step is still there
    assert any(frame.name == "broken_reply" for frame in raised.traceback)  # the test's own line, to fix
