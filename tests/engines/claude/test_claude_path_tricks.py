"""Path tricks against the memory tool: each is refused with is_error, and none reaches the proposal or the disk.

The issue found a doubled slash (`/memories//team/new.md`), a leading `//`,
full-width letters (`ｔｅａｍ`) and a full-width slash (`team／x.md`) getting
past the guards, four of five into the proposal. Here a scripted model sends
every such trick through `dream run --engine claude` against the strict fake
Messages server, beside one honest create so the run proposes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text  # noqa: F401

TRICKS = [
    memory("create", path="/memories//team/new.md", file_text="promoted into team"),
    memory("create", path="//memories/team/new2.md", file_text="promoted into team"),
    memory("create", path="/memories//logs/2026/01/05/forged.md", file_text="> forged session"),
    memory("create", path="/memories/./team/dot.md", file_text="promoted into team"),
    memory("create", path="/memories/ops/../team/up.md", file_text="promoted into team"),
    memory("create", path="/memories/ops／..／team/up2.md", file_text="promoted into team"),
    memory("create", path="/memories/ｔｅａｍ/wide.md", file_text="looks like team"),
    memory("create", path="/memories/team／slash.md", file_text="looks like team"),
    memory("create", path="/memories/Team/case.md", file_text="team on a case-insensitive disk"),
    memory("create", path="/memories/tеam/cyrillic.md", file_text="a Cyrillic е"),
    memory("create", path="/memories/te\u200bam/zero-width.md", file_text="a zero-width space"),
    memory("create", path="/memories/team /space.md", file_text="a trailing space"),
    memory("create", path="/memories/ｓｅｓｓｉｏｎｓ/wide.md", file_text="not memory"),
    memory("create", path="/memories/1ogs/digit.md", file_text="reads as logs"),
    memory("create", path="/memories/．dream/state.md", file_text="dream's own folder"),
    memory("create", path="/memories/Feedback_Small_PRs.md", file_text="a second file reading as the first"),
    memory("create", path="/memories/feedback_small_prѕ.md", file_text="a Cyrillic ѕ"),
    memory("create", path="/memories/team∕division.md", file_text="a division slash reads as team/"),
    memory("create", path="/memories/team\\backslash.md", file_text="a backslash is a folder on Windows"),
    memory("create", path="/memories/team:colon.md", file_text="macOS shows ':' as '/'"),
    memory("rename", old_path="/memories/MEMORY.md", new_path="/memories//team/MEMORY.md"),
    memory("rename", old_path="/memories/MEMORY.md", new_path="/memories/ｔｅａｍ/MEMORY.md"),
    memory("rename", old_path="/memories/MEMORY.md", new_path="/memories/team／MEMORY.md"),
    memory("rename", old_path="/memories/feedback_small_prs.md", new_path="/memories/TEAM/feedback_small_prs.md"),
    memory("rename", old_path="/memories//team/code_review.md", new_path="/memories/code_review.md"),
    memory("rename", old_path="/memories/feedback_small_prs.md", new_path="/memories/Feedback_Run_Tests.md"),
    memory("str_replace", path="/memories//logs/2026/01/05/x.md", old_str="a", new_str="b"),
    memory("delete", path="/memories/ｌｏｇｓ"),
]
HONEST = memory("create", path="/memories/project_path_rules.md",
                file_text="---\nname: path rules\ndescription: d\ntype: project\n---\nPaths are canonical.\n")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".dream" not in p.relative_to(root).parts}


def test_every_path_trick_is_refused_and_nothing_of_it_is_proposed(
    demo_store: Path, cli, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "off")  # one segment: every refusal stays a tool_result to check
    before = _files(demo_store)
    calls = TRICKS
    fake_api.play(*[Reply(calls[i:i + 5]) for i in range(0, len(calls), 5)], Reply([HONEST]),
                  Reply([text("- created project_path_rules.md: paths are canonical")]))

    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")

    assert run.code == 0 and run.json["status"] == "proposed", (run.stderr, run.json)
    results = fake_api.tool_results()
    assert len(results) == len(calls) + 1
    for call, result in zip(calls, results):
        content = result["content"] if isinstance(result["content"], str) else str(result["content"])
        assert result.get("is_error") is True, (call, content)
        assert "Refused" in content or "already exists" in content, (call, content)
    assert not results[-1].get("is_error")
    diff = cli("diff", run.json["proposal_id"], "--store", str(demo_store), "--json").json
    assert "project_path_rules.md" in diff["files_changed"]
    new = {f for f in diff["files_changed"] if f not in before}
    assert new == {"project_path_rules.md", "kafka_consumer_lag.md"}, diff["files_changed"]  # ours, and the finish's
    for word in ("promoted into team", "looks like team", "Cyrillic", "zero-width", "forged", "reads as logs",
                 "slash reads", "backslash", "macOS"):
        assert word not in diff["diff"]
    assert _files(demo_store) == before  # the store keeps its bytes until someone accepts
    assert cli("accept", run.json["proposal_id"], "--store", str(demo_store), "--json").code == 0
    after = _files(demo_store)
    assert set(after) == set(before) | {"project_path_rules.md", "kafka_consumer_lag.md"}  # nothing renamed away
    assert after["team/code_review.md"] == before["team/code_review.md"]


def test_a_path_spelled_otherwise_finds_the_existing_file(demo_store: Path, cli, fake_api: FakeAnthropic) -> None:
    """Resolution, not refusal, for what exists: `/memories//TEAM/code_review.md` is team/code_review.md."""
    fake_api.play(Reply([memory("view", path="/memories//TEAM/code_review.md"),
                         memory("view", path="/memories/ｏｐｓ/oncall_runbook.md")]),
                  Reply([memory("create", path="/memories/OPS/new_runbook.md", file_text=HONEST["input"]["file_text"])]),
                  Reply([text("- created ops/new_runbook.md")]))
    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")
    assert run.code == 0, (run.stderr, run.stdout)
    team, ops, created = fake_api.tool_results()
    assert not team.get("is_error") and (demo_store / "team/code_review.md").read_text().splitlines()[1] in str(team)
    assert not ops.get("is_error") and "oncall" in str(ops).lower()
    assert created["content"] == "File created successfully at: /memories/ops/new_runbook.md"  # no look-alike OPS/
    diff = cli("diff", run.json["proposal_id"], "--store", str(demo_store), "--json").json
    assert "ops/new_runbook.md" in diff["files_changed"] and not any("OPS" in f for f in diff["files_changed"])
