"""Store layouts (dream.store.layouts) and Codex's evidence and lease (dream.store.codex)."""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from dream.store import codex
from dream.store.layouts import CLAUDE_CODE, CODEX, LayoutKind, detect, layout_of, over_budget
from dream.store.tree import read_tree

FIXTURE = Path(__file__).parents[1] / "cli" / "codex_memories"


def test_a_codex_folder_is_known_by_its_shape_or_named(tmp_path):
    assert detect(FIXTURE) is CODEX
    assert detect(tmp_path) is CLAUDE_CODE
    (tmp_path / "rollout_summaries").mkdir()
    assert detect(tmp_path) is CODEX
    assert layout_of(tmp_path, "claude-code") is CLAUDE_CODE
    assert [k.value for k in LayoutKind] == ["claude-code", "codex"]


def test_evidence_is_never_in_the_memory_tree():
    assert sorted(read_tree(FIXTURE)) == ["MEMORY.md", "memory_summary.md", "skills/run-shop-tests/SKILL.md"]


def test_the_users_words_are_what_a_summary_quotes():
    text = ('Rollout context: the agent proposed to "forget the cache".\n'
            '- when testing, the user corrected: "always use uv run pytest" -> use uv\n'
            '> remember the staging host is stg-2\n'
            '- the user said "x" and the user asked: "keep commits short"\n')
    assert codex.user_words(text) == ["always use uv run pytest", "remember the staging host is stg-2", "x",
                                      "keep commits short"]


def test_a_summary_in_the_users_language_quotes_them_with_its_own_marks():
    lines = ["- Der Nutzer verlangte „vergiss die Slack-Hinweise“ -> weg", "- l'utilisateur a dit : « retiens ça »",
             "- ユーザーは「金曜日だと覚えておいて」と言った", "- User requested 'forget it, we're done' -> drop",
             '- the agent proposed "forget the cart cache"; the user declined',  # a quote before the user: not theirs
             '- the user ran "pytest -q" twice']  # no reporting verb: not something they said
    assert codex.user_words("\n".join(lines)) == [
        "vergiss die Slack-Hinweise", "retiens ça", "金曜日だと覚えておいて", "forget it, we're done"]


def test_a_verb_before_the_user_is_theirs_only_with_an_article_making_the_user_its_subject():
    lines = ["- beim Aufräumen verlangte der Nutzer: „vergiss das mit STRIPE_FAKE“",
             "- al limpiar, pidió el usuario: «olvida la regla de Slack»",
             "- der Agent fragte den Nutzer „soll ich die Notiz löschen?“",  # the agent asked the user: not theirs
             '- the agent asked the user "drop the table?"']
    assert codex.user_words("\n".join(lines)) == ["vergiss das mit STRIPE_FAKE", "olvida la regla de Slack"]


def test_each_summary_and_each_unsummarised_raw_thread_is_one_log(tmp_path):
    store = tmp_path / "memories"
    store.mkdir()
    (store / "rollout_summaries").mkdir()
    (store / "rollout_summaries" / "a.md").write_text(
        'thread_id: t1\nupdated_at: 2026-11-18T10:02:11Z\n\n- the user said: "forget the slack note"\n')
    (store / "raw_memories.md").write_text(
        '# Raw Memories\n\n## Thread `t1`\n- the user said: "forget the slack note"\n\n'
        '## Thread `t2`\nupdated_at: 2026-11-19T08:00:00+00:00\n- the user asked: "remember port 8080"\n')
    found = {(e.session, e.day.isoformat(), e.text) for e in codex.evidence(store)}
    assert found == {("t1", "2026-11-18", "> forget the slack note\n"), ("t2", "2026-11-19", "> remember port 8080\n")}
    assert sorted(codex.write_evidence_logs(store)) == ["2026/11/18/t1-codex.md", "2026/11/19/t2-codex.md"]
    assert codex.write_evidence_logs(store) == [], "an unchanged log is left as it is"
    (store / "raw_memories.md").write_text("# Raw Memories\n")
    codex.write_evidence_logs(store)
    logs = store / codex.EVIDENCE_LOGS
    assert sorted(p.relative_to(logs).as_posix() for p in logs.rglob("*.md")) == ["2026/11/18/t1-codex.md"]


def test_the_lease_is_codex_jobs_row(tmp_path):
    store = tmp_path / "memories"
    store.mkdir()
    now = time.time()
    assert codex.consolidation_lease(store, now) is None
    with closing(sqlite3.connect(tmp_path / "state_5.sqlite")) as db, db:
        db.execute("CREATE TABLE jobs (kind TEXT, job_key TEXT, status TEXT, lease_until INTEGER)")
        db.execute("INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', 'done', ?)", (int(now) + 600,))
        db.execute("INSERT INTO jobs VALUES ('memory_stage1', 't1', 'running', ?)", (int(now) + 600,))
    assert codex.consolidation_lease(store, now) is None, "a finished job and phase 1 hold no lease"
    with closing(sqlite3.connect(tmp_path / "state_5.sqlite")) as db, db:
        db.execute("UPDATE jobs SET status = 'running' WHERE kind = 'memory_consolidate_global'")
    assert "holds its lease (state_5.sqlite" in (codex.consolidation_lease(store, now) or "")
    assert codex.consolidation_lease(store, now + 601) is None, "an expired lease holds nothing"


def test_an_unreadable_state_database_skips_to_be_safe(tmp_path, monkeypatch):
    home = tmp_path / "sqlite-home"
    home.mkdir()
    (home / "state_7.sqlite").write_bytes(b"not a database at all" * 10)
    monkeypatch.setenv("CODEX_SQLITE_HOME", str(home))
    why = codex.consolidation_lease(tmp_path / "memories", time.time())
    assert why is not None and "cannot read Codex's state database" in why and os.fspath(home) in why


def test_only_an_index_over_its_token_budget_goes_to_a_person():
    assert over_budget(CODEX, {"memory_summary.md": b"v1\n" + b"x" * 9_990}) is None
    assert "about 2,501 tokens, over the 2,500" in (over_budget(CODEX, {"memory_summary.md": b"x" * 10_004}) or "")
    assert over_budget(CLAUDE_CODE, {"MEMORY.md": b"x" * 100_000}) is None


def test_the_claude_engine_may_not_write_codex_evidence(tmp_path):
    from dream.engines.claude.memory_tool import StagingMemoryTool, ToolError  # start-up: only this test needs it
    from dream.store.tree import materialize

    materialize(read_tree(FIXTURE), tmp_path / "staging")  # what a run gives the engine: memories only
    tool = StagingMemoryTool(tmp_path / "staging")
    for path, why in (("rollout_summaries/x.md", "is under rollout_summaries/"), ("Raw_Memories.md", "is Raw_Memories.md")):
        try:
            tool.call({"command": "create", "path": f"/memories/{path}", "file_text": "x\n"})
        except ToolError as refused:
            assert f"{why}, which is not memory" in str(refused)
        else:
            raise AssertionError(f"{path} was written")
    tool.call({"command": "create", "path": "/memories/skills/deploy/SKILL.md", "file_text": "x\n"})
    assert (tmp_path / "staging" / "skills" / "deploy" / "SKILL.md").is_file()
