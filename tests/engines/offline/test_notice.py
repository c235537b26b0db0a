"""The noticing stage: what the request reader does not read reaches a person with a suggested change; talk
that names no memory, tasks, questions and withdrawn requests do not."""

from __future__ import annotations

from datetime import date

import pytest

from helpers.offline_engine import run, sessions, topic

DAY, NEXT = date(2026, 3, 9), date(2026, 3, 10)
TREE = {
    "MEMORY.md": "- [Gateway](reference_gateway.md) — gateway on port 7070\n"
                 "- [Backups](project_backups.md) — backups run at 02:00 on bk-2\n".encode(),
    "reference_gateway.md": topic("Gateway", "gateway on port 7070", "reference", "The gateway listens on port 7070."),
    "project_backups.md": topic("Backups", "backups run at 02:00 on bk-2", "project", "Backups run at 02:00 on bk-2."),
}


@pytest.mark.parametrize("said, suggested", [
    ("the backups notes can go", "forget `project_backups.md`?"),
    ("gateway: 7070 → 7071", "in `reference_gateway.md`, 7070 → 7071?"),
    ("s/7070/7072/ please", "in `reference_gateway.md`, 7070 → 7072?"),
    ("备份那条删掉吧 backups", "forget `project_backups.md`?"),
])
def test_a_noticed_sentence_reaches_a_person_with_a_suggested_change(tmp_path, said, suggested):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.changes == [] or all(c.kind != "request" for c in result.changes)  # noticed, never applied
    assert any(f"“{said}”" in item and suggested in item for item in result.needs_person), result.needs_person


@pytest.mark.parametrize("said", [
    "remember when the backups ran twice and filled the disk?",
    "remember to restart the gateway after the deploy",
    "I always forget to check the backups",
    "delete the tmp folder and rerun",
])
def test_questions_tasks_and_talk_reach_no_one(tmp_path, said):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.needs_person == [] and out == {k: v for k, v in TREE.items()}


def test_a_forget_withdrawn_the_next_day_removes_nothing(tmp_path):
    rows = sessions(("s1", DAY, "user", "forget the backups note"),
                    ("s2", NEXT, "user", "about yesterday: keep the backups note after all"))
    out, result = run(tmp_path, TREE, rows)
    assert "project_backups.md" in out and result.changes == []


def test_a_bare_keep_it_after_a_forget_withdraws_it(tmp_path):
    rows = sessions(("s1", DAY, "user", "forget the backups note"), ("s1", DAY, "assistant", "Remove it?"),
                    ("s1", DAY, "user", "hmm no, keep it"))
    out, _ = run(tmp_path, TREE, rows)
    assert "project_backups.md" in out


def test_a_value_inside_a_host_name_is_never_edited(tmp_path):
    tree = {"MEMORY.md": "- [Backups](project_backups.md) — backups on bk-2.internal\n".encode(),
            "project_backups.md": topic("Backups", "backups on bk-2.internal", "project",
                                        "Backups run on bk-2.internal:9000.")}
    out, result = run(tmp_path, tree, sessions(("s1", DAY, "user", "actually backups run on bk-3 now, not bk-2")))
    assert out["project_backups.md"] == tree["project_backups.md"]
    assert any("bk-3" in item and "inside a longer name" in item for item in result.needs_person)


def test_every_line_that_withdraws_passes_the_quick_filter():
    """The polars filter in front of the withdrawal check drops no line the check would read: every user line of
    every visible eval case that withdraws holds one of the filter's texts (and most lines do not)."""
    import polars as pl

    from dream.engines.offline.notice import _withdrawal, _withdrawal_texts
    from dream.eval.cases import default_cases_dir, load_cases

    said = [line[2:] for case in load_cases(default_cases_dir()) for log in case.logs
            for line in log.text.splitlines() if line.startswith("> ")]
    kept = pl.Series(said).str.contains(_withdrawal_texts())
    withdrawing = [text for text in said if _withdrawal(text)]
    assert len(withdrawing) > 20
    assert all(kept[i] for i, text in enumerate(said) if _withdrawal(text))
    assert kept.sum() < len(said) / 2  # worth having even here, where most lines ask for something
