"""Adversarial tool calls: each is refused with a tool error, the run goes on, and no byte changes.

The model here is the fake API playing a hostile script. Every call below
must come back as a tool_result with is_error, and afterwards the staging
copy, the store (with its logs) and a folder outside both keep their bytes.
"""

from __future__ import annotations

from dataclasses import replace

import os
from pathlib import Path

import pytest
from helpers.fake_anthropic import (  # noqa: F401
    FakeAnthropic,
    Reply,
    fake_api,
    memory,
    raw_tool_use,
    text,
    tool_use,
)
from helpers.claude_store import engine_input

from dream.engines.claude import ClaudeEngine

BIG = "x" * (1024 * 1024)

# (tool call, a phrase the error must contain)
ATTACKS = [
    (memory("view", path="/memories/../../etc/passwd"), "'..'"),
    (memory("create", path="/memories/../outside.md", file_text="escaped"), "'..'"),
    (memory("view", path="/etc/passwd"), "outside /memories"),
    (memory("create", path="/tmp/evil.md", file_text="evil"), "outside /memories"),
    (memory("view", path="/memoriesX/x.md"), "outside /memories"),
    (memory("view", path="/memories/escape.md"), "symlink"),
    (memory("str_replace", path="/memories/escape.md", old_str="secret", new_str="owned"), "symlink"),
    (memory("create", path="/memories/linkdir/new.md", file_text="through a linked folder"), "symlink"),
    (memory("create", path="/memories/logs/2025/03/02/s9-fake.md", file_text="> forged"), "not memory"),
    (memory("str_replace", path="/memories/logs/2025/03/02/s1-tests.md", old_str="tests", new_str="x"), "not memory"),
    (memory("create", path="/memories/sessions/old.md", file_text="forged"), "not memory"),
    (memory("create", path="/memories/.dream/state.json", file_text="{}"), "hidden"),
    (memory("create", path="/memories/team/new.md", file_text="---\nname: n\n---\npromoted"), "team/"),
    (memory("rename", old_path="/memories/deploy.md", new_path="/memories/team/deploy.md"), "team/"),
    (memory("rename", old_path="/memories/team/style.md", new_path="/memories/style.md"), "team/"),
    (memory("create", path="/memories/big.md", file_text=BIG), "100 KB"),
    (memory("create", path="/memories/bin.md", file_text="\x00\x01\x02binary"), "control character"),
    (memory("str_replace", path="/memories/testing.md", old_str="Run", new_str="R\x00un"), "control character"),
    (memory("rename", old_path="/memories/deploy.md", new_path="/memories/../deploy.md"), "'..'"),
    (memory("rename", old_path="/memories/deploy.md", new_path="/tmp/deploy.md"), "outside /memories"),
    (memory("create", path="/memories/notes.txt", file_text="plain"), "not a .md file"),
    (memory("delete", path="/memories"), "itself"),
    (memory("create", path="/memories/missing-text.md"), "malformed create command"),
    (raw_tool_use("memory", {"command": "explode", "path": "/memories"}), "unknown memory command"),
    (raw_tool_use("memory", {"command": "view", "path": 42}), "malformed view command"),
    (raw_tool_use("memory", {"command": "insert", "path": "/memories/testing.md", "insert_line": "one",
                             "insert_text": "x"}), "malformed insert command"),
    (tool_use("read_session", session_id="s1", start="first"), "Malformed input for read_session"),
    (tool_use("search_logs", pattern="(unclosed"), "Bad regular expression"),
    (tool_use("bash", command="cat ~/.ssh/id_rsa"), "not found"),
    (tool_use("web_fetch", url="https://example.com"), "not found"),
]


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every file and link under root (hidden ones too), with its bytes or its link target."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
    return out


@pytest.fixture
def hostile(tmp_path: Path):
    inp = engine_input(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (inp.staging.folder() / "escape.md").symlink_to(outside / "secret.md")
    (inp.staging.folder() / "linkdir").symlink_to(outside, target_is_directory=True)
    return inp, outside


def test_every_adversarial_call_is_refused_and_nothing_changes(
    hostile, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "off")  # one segment: every refusal stays a tool_result to check
    inp, outside = hostile
    roots = {"staging": inp.staging.folder(), "store": inp.store_root, "outside": outside, "tmp": Path("/tmp")}
    before = {name: snapshot(p) for name, p in roots.items() if name != "tmp"}
    calls = [call for call, _ in ATTACKS]
    # a few calls per turn, then a closing summary
    turns = [Reply(calls[i : i + 4], output_tokens=100) for i in range(0, len(calls), 4)]  # not 1 MB worth
    fake_api.play(*turns, Reply([text("Nothing to change.")]))

    engine = ClaudeEngine()
    # The 1 MB create stays in the history (a tool call's input is never cleared), about 260K
    # tokens a turn: past the default input budget. This test is about refusals, not budgets.
    result = engine.consolidate(replace(inp, settings=inp.settings.replace(max_cost_usd=100.0)))

    results = fake_api.tool_results()
    assert len(ATTACKS) >= 15 and len(results) == len(ATTACKS)
    for (call, phrase), res in zip(ATTACKS, results):
        content = res["content"] if isinstance(res["content"], str) else " ".join(
            b.get("text", "") for b in res["content"])
        assert res.get("is_error") is True, (call, content)
        assert phrase in content, (call, content)
    assert fake_api.protocol_errors == []
    assert {name: snapshot(p) for name, p in roots.items() if name != "tmp"} == before
    assert not Path("/tmp/evil.md").exists() and not Path("/tmp/deploy.md").exists()
    assert result.changes == [] and result.summary == "Nothing to change."
    memory_refusals = sum(1 for call, _ in ATTACKS if call["name"] == "memory")
    assert len(engine.refusals) == memory_refusals


def test_a_refused_call_does_not_stop_later_good_calls(hostile, fake_api: FakeAnthropic) -> None:
    inp, _ = hostile
    fake_api.play(
        Reply([memory("create", path="/memories/../x.md", file_text="no"),
               memory("str_replace", path="/memories/deploy.md", old_str="Tag, then push", new_str="Tag and push")]),
        Reply([text("- updated deploy.md: wording")]),
    )
    result = ClaudeEngine().consolidate(inp)
    first, second = fake_api.tool_results()
    assert first["is_error"] is True and not second.get("is_error")
    assert (inp.staging.folder() / "deploy.md").read_text().endswith("Tag and push; CI publishes.\n")
    assert [(c.action, c.path) for c in result.changes] == [("updated", "deploy.md")]


def test_team_files_can_be_edited_and_deleted_but_not_created(hostile, fake_api: FakeAnthropic) -> None:
    inp, _ = hostile
    fake_api.play(
        Reply([memory("str_replace", path="/memories/team/style.md", old_str="100 columns", new_str="100 cols")]),
        Reply([memory("delete", path="/memories/team/style.md")]),
        Reply([text("done")]),
    )
    ClaudeEngine().consolidate(inp)
    assert [r.get("is_error", False) for r in fake_api.tool_results()] == [False, False]
    assert not (inp.staging.folder() / "team" / "style.md").exists()
