"""The offline engine, phase by phase, on small hand-written stores."""

from __future__ import annotations

import hashlib
import re
from datetime import date

import pytest

from dream.config import Settings
from dream.engines.offline.requests import extract, gather_requests
from dream.engines.offline.similarity import similar_pairs
from dream.store.validate import errors, validate_tree
from helpers.offline_engine import TODAY, run, sessions, topic


def actions(result) -> list[tuple[str, str]]:
    return [(c.action, c.path) for c in result.changes]


def test_near_duplicates_are_merged_keeping_extra_lines(tmp_path):
    body_a = "Run the test suite with pytest -x before pushing any branch to origin."
    body_b = "Run the test suite with pytest -x before pushing any branch to origin!\nAlso on CI."
    tree = {
        "MEMORY.md": b"- [Tests](tests.md) \xe2\x80\x94 run tests\n- [Tests again](tests2.md) \xe2\x80\x94 run tests\n",
        "tests.md": topic("tests", "run tests", "feedback", body_a),
        "tests2.md": topic("tests2", "run tests", "feedback", body_b),
    }
    out, result = run(tmp_path, tree)
    assert actions(result) == [("merged", "tests.md")]
    assert "tests2.md" not in out
    assert out["MEMORY.md"] == b"- [Tests](tests.md) \xe2\x80\x94 run tests\n"
    assert out["tests.md"] == topic("tests", "run tests", "feedback", body_a + "\n\nAlso on CI.")


def test_exact_duplicate_inline_rules_merge(tmp_path):
    tree = {"MEMORY.md": b"- Always use uv run.\n- Never push to main.\n- always use UV run\n"}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("merged", "MEMORY.md")]
    assert out["MEMORY.md"] == b"- Always use uv run.\n- Never push to main.\n"


def test_different_memories_are_not_merged(tmp_path):
    tree = {
        "MEMORY.md": b"- [A](a.md) \xe2\x80\x94 a\n- [B](b.md) \xe2\x80\x94 b\n",
        "a.md": topic("a", "a", "project", "The database runs PostgreSQL 16 on port 5433."),
        "b.md": topic("b", "b", "project", "Deploys happen on Fridays through the release train."),
    }
    out, result = run(tmp_path, tree)
    assert result.changes == [] and out == tree


def test_memories_named_alike_but_for_a_number_are_not_merged(tmp_path):
    # Names and descriptions compare by word stems; a number is not a stem: 12345 and 12346 differ.
    tree = {
        "MEMORY.md": b"- [T](ticket_12345.md) \xe2\x80\x94 t\n- [T](ticket_12346.md) \xe2\x80\x94 t\n",
        "ticket_12345.md": topic("ticket_12345", "ticket 12345 about billing", "project",
                                 "The invoice export drops the VAT column for Danish customers."),
        "ticket_12346.md": topic("ticket_12346", "ticket 12346 about billing", "project",
                                 "Refunds over 500 EUR need a second approver in finance."),
    }
    out, result = run(tmp_path, tree)
    assert "merged" not in [action for action, _ in actions(result)]
    assert {"ticket_12345.md", "ticket_12346.md"} <= set(out)


def test_team_duplicates_merge_only_when_identical(tmp_path):
    body = "Code review needs two approvals from the platform team members."
    tree = {
        "MEMORY.md": b"- [R](team/r.md) \xe2\x80\x94 r\n- [R2](team/r2.md) \xe2\x80\x94 r\n- [R3](team/r3.md) \xe2\x80\x94 r\n",
        "team/r.md": topic("r", "r", "project", body),
        "team/r2.md": topic("r2", "r", "project", body + "!"),  # same after normalization
        "team/r3.md": topic("r3", "r", "project", body.replace("two", "three")),  # near, not equal
    }
    out, result = run(tmp_path, tree)
    assert actions(result) == [("merged", "team/r.md")]
    assert sorted(out) == ["MEMORY.md", "team/r.md", "team/r3.md"]


def test_relative_dates_use_the_files_own_date(tmp_path):
    tree = {
        "MEMORY.md": b"- [Deploy](deploy.md) \xe2\x80\x94 deploy\n- [Z](zh.md) \xe2\x80\x94 z\n- [N](nodate.md) \xe2\x80\x94 n\n",
        "deploy.md": topic("deploy", "deploy", "project",
                           "Deploy broke yesterday; fix ships next Friday.\n`yesterday` in code stays.",
                           created="2026-03-04"),
        "zh.md": topic("zh", "z", "project", "昨天修好了", metadata_date="x")
        .replace(b"metadata_date: x\n", b"metadata:\n  updated: 2026-02-01\n"),
        "nodate.md": topic("nodate", "n", "project", "We met yesterday."),
    }
    out, result = run(tmp_path, tree)
    assert actions(result) == [("dated", "deploy.md"), ("dated", "zh.md")]
    assert out["deploy.md"] == topic("deploy", "deploy", "project",
                                     "Deploy broke on 2026-03-03; fix ships next Friday.\n`yesterday` in code stays.",
                                     created="2026-03-04")
    assert "2026-01-31修好了" in out["zh.md"].decode()
    assert out["nodate.md"] == tree["nodate.md"]
    assert "nodate.md: relative dates left as they are: no source date" in result.summary
    assert result.needs_person == ["deploy.md line 8: “next Friday”, written Wednesday 2026-03-04, may be 2026-03-06 or "
                                   "2026-03-13: left as written; write the date it means",
                                   "nodate.md line 7: “yesterday” left as written: no source date (date, created, "
                                   "updated, modified in frontmatter); write the date it means"]  # a person is told


def test_requests_are_filed_indexed_and_dated_from_the_session(tmp_path):
    tree = {"MEMORY.md": b"# Memory\n"}
    rows = sessions(
        ("s1", date(2026, 3, 2), "user", "Thanks. Remember that the staging database moved to port 5433 yesterday."),
        ("s1", date(2026, 3, 2), "assistant", "Remember that I am an assistant."),
        ("s2", date(2026, 3, 5), "user", "Never force-push to the main branch."),
        ("s2", date(2026, 3, 5), "user", "should we always squash?"),
    )
    out, result = run(tmp_path, tree, rows)
    # Issue #12: short file names and titles, dates that read as English ("on 2026-03-01").
    assert actions(result) == [("created", "project_staging_database_moved_port.md"),
                               ("created", "feedback_never_force_push_main.md")]
    assert out["project_staging_database_moved_port.md"] == (
        b"---\nname: Staging database moved to port 5433\n"
        b"description: The staging database moved to port 5433 on 2026-03-01\ntype: project\n"
        b"created: 2026-03-02\noriginSessionId: s1\n---\n\n"
        b"The staging database moved to port 5433 on 2026-03-01.\n\nSource: session s1 (2026-03-02).\n")
    assert out["MEMORY.md"].decode().splitlines() == [
        "# Memory",
        "- [Staging database moved to port 5433](project_staging_database_moved_port.md)"
        " — The staging database moved to port 5433 on 2026-03-01",
        "- [Never force-push to the main branch](feedback_never_force_push_main.md)",
    ]
    assert result.changes[1].source == "s2"


def test_request_already_known_is_not_filed_twice(tmp_path):
    tree = {"MEMORY.md": b"- Never force-push to the main branch.\n"}
    rows = sessions(("s1", date(2026, 3, 2), "user", "never force-push to the main branch"))
    out, result = run(tmp_path, tree, rows)
    assert actions(result) == []  # nothing changed, so no change is reported: a note says it was known
    assert any("already covered by MEMORY.md line 1" in note for note in result.summary.splitlines())
    assert out == tree


def test_forget_removes_the_matching_memory(tmp_path):
    tree = {
        "MEMORY.md": b"- [Old deploy script](deploy_script.md) \xe2\x80\x94 how deploy.sh works\n"
                     b"- [Port](port.md) \xe2\x80\x94 db port\n",
        "deploy_script.md": topic("old deploy script", "how deploy.sh works", "project", "Run ./deploy.sh"),
        "port.md": topic("port", "db port", "project", "Port 5433"),
    }
    rows = sessions(("s9", date(2026, 3, 8), "user", "Please forget about the old deploy script."),
                    ("s9", date(2026, 3, 8), "user", "Forget the kubernetes cluster"))
    out, result = run(tmp_path, tree, rows)
    assert actions(result) == [("forgotten", "deploy_script.md")]
    assert result.changes[0].source == "s9"
    assert sorted(out) == ["MEMORY.md", "port.md"]
    assert out["MEMORY.md"] == b"- [Port](port.md) \xe2\x80\x94 db port\n"
    assert "forget “the kubernetes cluster” (session s9, 2026-03-08, line 2): no memory matches" in result.summary


def test_correction_updates_the_contradicted_memory(tmp_path):
    tree = {"MEMORY.md": b"- [DB](db.md) \xe2\x80\x94 database on 5432\n",
            "db.md": topic("db", "database", "project", "- The staging database listens on port 5432.")}
    rows = sessions(("s3", date(2026, 3, 9), "user", "Actually, the staging database listens on 5433, not 5432."))
    out, result = run(tmp_path, tree, rows)
    assert actions(result) == [("updated", "db.md")]
    assert out["db.md"] == topic("db", "database", "project",
                                 "- The staging database listens on port 5433 (was 5432 until 2026-03-09).")
    assert out["MEMORY.md"] == "- [DB](db.md) — database on 5433\n".encode()


def test_correction_with_trailing_clause_rewrites_only_related_lines(tmp_path):
    body = "The primary database is Postgres 15 on RDS.\nBackups are kept 15 days."
    tree = {"MEMORY.md": b"- [DB](db.md) \xe2\x80\x94 database\n",
            "db.md": topic("db", "Primary database is Postgres 15", "project", body)}
    rows = sessions(("s4", date(2026, 3, 9), "user", "actually, the DB is Postgres 16 not 15, we upgraded RDS in October"))
    out, result = run(tmp_path, tree, rows)
    assert actions(result) == [("updated", "db.md")]
    assert out["db.md"] == topic("db", "Primary database is Postgres 16", "project",
                                 "The primary database is Postgres 16 (was 15 until 2026-03-09) on RDS.\n"
                                 "Backups are kept 15 days.")


def test_correction_applied_before_files_nothing_new(tmp_path):
    tree = {"MEMORY.md": b"- [DB](db.md) \xe2\x80\x94 database\n",
            "db.md": topic("db", "database", "project", "Production runs Postgres 16 (was 15 until 2026-03-09).")}
    rows = sessions(("s4", date(2026, 3, 9), "user", "actually, we're on Postgres 16 now, not 15"))
    out, result = run(tmp_path, tree, rows)
    assert result.changes == [] and out == tree


def test_pointer_to_moved_file_is_repaired(tmp_path):
    tree = {"MEMORY.md": b"- [Style](style.md) \xe2\x80\x94 code style\n",
            "notes/style.md": topic("style", "code style", "feedback", "Use black.")}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("repaired", "MEMORY.md")]
    assert out["MEMORY.md"] == b"- [Style](notes/style.md) \xe2\x80\x94 code style\n"


def test_pointer_repaired_by_frontmatter_name(tmp_path):
    tree = {"MEMORY.md": b"- [Style](code-style.md) \xe2\x80\x94 code style\n",
            "feedback_style.md": topic("code-style", "code style", "feedback", "Use black.")}
    out, _ = run(tmp_path, tree)
    assert out["MEMORY.md"] == b"- [Style](feedback_style.md) \xe2\x80\x94 code style\n"


def test_bare_broken_pointer_is_archived_not_deleted(tmp_path):
    tree = {"MEMORY.md": b"- [Gone](gone.md)\n- [Tasks](../TASKS.md) \xe2\x80\x94 outside\n"}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("archived", "MEMORY.md"), ("created", "archive.md"), ("indexed", "MEMORY.md")]
    assert out["MEMORY.md"].decode().splitlines() == [
        "- [Tasks](../TASKS.md) — outside",
        "- [Archive](archive.md) — entries moved out of this index; look here when a pointer seems missing"]
    archive = out["archive.md"].decode()
    assert "type: reference" in archive
    assert "## 2026-03-10 — pointers to files that no longer exist\n\n- [Gone](gone.md)\n" in archive
    assert "../TASKS.md leaves the store" in result.summary


def test_an_index_line_whose_file_is_missing_but_carries_a_rule_becomes_that_file_still_indexed(tmp_path):
    index = ("# Memory\n"
             "- [Deploys](feedback_deploys.md) — never deploy on Fridays; tag the release first\n"
             "- [Tests](feedback_tests.md) — run make test before pushing\n"
             "Deploy rules: see [deploys](feedback_deploys.md).\n").encode()
    tree = {"MEMORY.md": index, "feedback_tests.md": topic("Tests", "run make test before pushing", "feedback", "x")}
    out, result = run(tmp_path, tree)
    assert out["MEMORY.md"] == index  # the line stays, and so does the prose link to the file it brings back
    assert actions(result) == [("created", "feedback_deploys.md")]
    assert out["feedback_deploys.md"].decode() == (
        "---\nname: Deploys\ndescription: never deploy on Fridays; tag the release first\ntype: feedback\n---\n\n"
        "never deploy on Fridays; tag the release first\n")
    assert "archive.md" not in out and result.needs_person == []
    assert errors(validate_tree(out)) == []


def test_a_missing_file_is_named_from_its_path_when_the_index_title_is_a_file_name(tmp_path):
    index = "- [feedback_review.md](feedback_review.md) — 리뷰는 두 명 이상 승인 후 병합\n".encode()
    out, _ = run(tmp_path, {"MEMORY.md": index})
    made = out["feedback_review.md"].decode()
    assert "name: Review\n" in made and made.endswith("리뷰는 두 명 이상 승인 후 병합\n")
    assert out["MEMORY.md"].decode() == "- [Review](feedback_review.md) — 리뷰는 두 명 이상 승인 후 병합\n"


def test_orphan_topic_is_indexed(tmp_path):
    tree = {"MEMORY.md": b"# Index\n", "user_profile.md": topic("User profile", "Backend dev, likes Rust", "user", "x")}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("indexed", "MEMORY.md")]
    assert out["MEMORY.md"].decode() == "# Index\n- [User profile](user_profile.md) — Backend dev, likes Rust\n"


# ---------------------------------------------------------------- issue #20, "Quieter housekeeping"

LONG_HOOK = ("every modal uses Width::Large, closeButton(false) and footer actions aligned to End; "
             "create and edit modals also drop the cancel action, so the form reads as one step")


def test_a_long_index_hook_is_shortened_without_editing_its_topic_file(tmp_path):
    body = ("Every Filament modal: Width::Large, closeButton(false), footer actions aligned End.\n\n"
            "Create and edit modals also drop the cancel action (cancelAction(false)): the form reads as one step.")
    modal = topic("Filament modal defaults", "modal defaults", "feedback", body)
    tree = {"MEMORY.md": f"- [Filament modal defaults](feedback_modals.md) — {LONG_HOOK}\n".encode(),
            "feedback_modals.md": modal}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("shortened", "MEMORY.md")]
    line = out["MEMORY.md"].decode().rstrip("\n")
    assert len(line) <= 150 and line.endswith("…")
    assert out["feedback_modals.md"] == modal  # the file says it already: not a byte changed
    assert "feedback_modals.md (already there)" in result.changes[0].detail


def test_unless_the_file_lacks_that_text_which_goes_in_labelled(tmp_path):
    hook = ("DataFirewall skips framework-level static data by getData tag; "
            "the ipodate false alarm was fixed on 2026-07-02 after the ndim-based skip was rejected")
    firewall = topic("Firewall static data", "firewall skips static data", "project",
                     "The DataFirewall skips framework-level static data by its getData tag.")
    tree = {"MEMORY.md": f"- [Firewall static data](project_firewall.md) — {hook}\n".encode(),
            "project_firewall.md": firewall}
    out, result = run(tmp_path, tree)
    assert len(out["MEMORY.md"].decode().rstrip("\n")) <= 150
    text = out["project_firewall.md"].decode()
    assert text == firewall.decode() + f"\n**From the index:** {hook}\n"  # labelled, after the file's own text
    assert actions(result) == [("shortened", "MEMORY.md")]


def test_a_description_comes_from_the_index_hook_when_that_says_more_than_the_name(tmp_path):
    hook = ("when enumerating options, surface known vendor limits (DWD, quotas, admin setup) at decision "
            "time, not on a later error, so the user picks with the limits in view")
    tree = {"MEMORY.md": f"- [Flag architecture limits upfront](feedback_flag_limits.md) — {hook}\n".encode(),
            "feedback_flag_limits.md": b"# Flag architecture limitations upfront\n\n"
                                       b"Surface vendor limitations at decision time.\n"}
    out, _ = run(tmp_path, tree)
    text = out["feedback_flag_limits.md"].decode()
    assert text.startswith("---\nname: Flag architecture limitations upfront\ndescription: when enumerating options")
    assert "description: Flag architecture" not in text


def test_a_description_does_not_repeat_the_name_when_the_hook_says_no_more(tmp_path):
    from dream.engines.offline.orient import Workspace, ensure_frontmatter
    from dream.store.model import Store

    tree = {"MEMORY.md": b"- [Computed accessors](feedback_computed.md) \xe2\x80\x94 computed accessors over DB columns\n",
            "feedback_computed.md": b"# Computed accessors over DB columns\n\n"
                                    b"If a value derives from existing columns, use an accessor, not a new column.\n"}
    ws = Workspace(Store.from_tree(tree), Settings(), TODAY)
    computed = ws.store.topics["feedback_computed.md"]
    ensure_frontmatter(ws, computed, "a test edits it")
    assert computed.name == "Computed accessors over DB columns"
    assert computed.description == "If a value derives from existing columns, use an accessor, not a new column."


def test_long_inline_rule_is_wrapped_and_stays_whole_in_the_index(tmp_path):
    # Was: demoted to a topic file behind a cut-off link. Issue #12: a line without a link is the
    # whole rule, so it stays in the index, wrapped as one list item.
    rule = "Always " + "check the migration plan twice " * 6
    tree = {"MEMORY.md": f"- {rule.strip()}\n".encode()}
    out, result = run(tmp_path, tree)
    assert [a for a, _ in actions(result)] == ["shortened"]
    index = out["MEMORY.md"].decode().splitlines()
    assert sorted(out) == ["MEMORY.md"] and len(index) == 2
    assert all(len(line) <= 150 for line in index) and index[1].startswith("  ") and index[1][2] != " "
    assert " ".join(" ".join(index).split()) == "- " + " ".join(rule.split())
    assert errors(validate_tree(out, {"MEMORY.md"})) == []


def test_long_word_without_spaces_is_still_demoted(tmp_path):
    rule = "Always use https://example.com/" + "x" * 200
    tree = {"MEMORY.md": f"- {rule}\n".encode()}
    out, result = run(tmp_path, tree)
    assert [a for a, _ in actions(result)] == ["created", "shortened"]
    assert rule in out[result.changes[0].path].decode()


def test_over_budget_index_archives_oldest_entries(tmp_path):
    lines = "".join(f"- Rule {i}: {hashlib.sha256(str(i).encode()).hexdigest()}\n" for i in range(250))
    tree = {"MEMORY.md": ("# Index\n" + lines).encode()}
    out, result = run(tmp_path, tree)
    index = out["MEMORY.md"].decode().splitlines()
    assert len(index) == 200
    assert index[0] == "# Index" and index[1].startswith("- Rule 52: ")
    assert index[-1].startswith("- [Archive](archive.md)")
    archive = out["archive.md"].decode()
    # 250 rules + heading + the archive's own line = 252: the 52 oldest moved.
    assert "\n- Rule 0: " in archive and "\n- Rule 51: " in archive
    assert "Rule 52:" not in archive
    assert errors(validate_tree(out, set(out))) == []


def test_an_archive_rolls_over_into_dated_files_before_it_grows_large(tmp_path):
    from dream.engines.offline.archive import ROLL_BYTES
    from dream.store.tree import is_archive

    rules = [f"- Rule {i}: {hashlib.sha256(str(i).encode()).hexdigest()}" for i in range(ROLL_BYTES // 40)]
    out, result = run(tmp_path, {"MEMORY.md": ("# Index\n" + "\n".join(rules) + "\n").encode()})
    archives = sorted(p for p in out if is_archive(p))
    rolled = [p for p in archives if p != "archive.md"]
    assert len(rolled) >= 2 and all(p.startswith(f"archive-{TODAY.isoformat()}") for p in rolled)
    assert all(len(out[p]) <= ROLL_BYTES for p in archives)
    held = "".join(out[p].decode() for p in ["MEMORY.md", *archives]).splitlines()
    assert set(rules) <= set(held)  # word for word, each rule somewhere
    archive = out["archive.md"].decode()
    assert all(f"]({p})" in archive for p in rolled)  # each dated file reachable from the archive
    index = out["MEMORY.md"].decode()
    assert not any(p in index for p in rolled)  # the index keeps its one archive line
    assert {c.path for c in result.changes if c.action == "archived"} >= set(rolled)
    assert errors(validate_tree(out, set(out))) == []
    again, second = run(tmp_path / "again", out)
    assert second.changes == [] and again == out


def test_second_run_is_a_noop(tmp_path):
    tree = {
        "MEMORY.md": ("- [Gone](gone.md) — lost\n- " + "x " * 100 + "\n").encode(),
        "orphan.md": topic("orphan", "o", "project", "Met yesterday.", created="2026-01-05"),
        "a.md": topic("a", "d", "project", "Same text in two files here."),
        "b.md": topic("b", "d", "project", "Same text in two files here."),
    }
    rows = sessions(("s1", date(2026, 3, 2), "user", "Remember that backups run nightly at 02:00."))
    first, result = run(tmp_path, tree, rows)
    assert result.changes
    second, again = run(tmp_path / "again", first)
    assert again.changes == [] and second == first


def test_files_with_odd_frontmatter_are_not_edited(tmp_path):
    weird = b"---\nname: infra\ndescription: ports\ntype: infrastructure\ncreated: 2026-01-01\n---\nWe moved it yesterday.\n"
    tree = {"MEMORY.md": b"- [Infra](infra.md) \xe2\x80\x94 ports\n", "infra.md": weird}
    out, result = run(tmp_path, tree)
    assert out == tree and result.changes == []
    assert "infra.md: relative dates left as they are" in result.summary


def test_deterministic(tmp_path):
    tree = {"MEMORY.md": b"- [A](a.md)\n- [Gone](g.md)\n", "a.md": topic("a", "a", "user", "yesterday", date="2026-01-02"),
            "o.md": topic("o", "o", "project", "orphan")}
    first, r1 = run(tmp_path / "1", tree)
    second, r2 = run(tmp_path / "2", tree)
    assert first == second and r1 == r2


@pytest.mark.parametrize("sentence,expected", [
    ("Remember that the API key lives in 1Password.", ("remember", "the API key lives in 1Password")),
    ("don't use emoji in commit messages", ("rule", "Don't use emoji in commit messages")),
    ("Correction: the repo is on GitLab, not GitHub", ("correction", "the repo is on GitLab, not GitHub")),
    ("forget that I use vim", ("forget", "I use vim")),
    ("记住：周五不部署", ("remember", "周五不部署")),
    ("recuerda que el servidor está en Madrid", ("remember", "el servidor está en Madrid")),
    ("Can you remember the port?", None),
    ("don't worry about it", None),
    ("always = foo(); bar();", None),
    ("I always forget this", None),
    ("no, remember I prefer uv over pip", ("remember", "I prefer uv over pip")),
])
def test_request_extraction(sentence, expected):
    assert extract(sentence) == expected


def test_only_user_lines_are_requests():
    rows = sessions(("s1", date(2026, 3, 1), "assistant", "Remember that I did it."),
                    ("s1", date(2026, 3, 1), "tool", "always true"),
                    ("s1", date(2026, 3, 1), "user", "ok. Always pin versions."))
    found = gather_requests(rows)
    assert [(r.kind, r.text, r.session, r.seq) for r in found] == [("rule", "Always pin versions", "s1", 2)]


def test_blocking_finds_near_duplicates_among_many():
    texts = [f"memory number {i} about subsystem {i * 7} and owner team{i % 13}" for i in range(400)]
    texts.append(texts[123] + " extra")
    pairs = similar_pairs(texts, 90)
    assert (123, 400) in {(i, j) for i, j, _ in pairs}


@pytest.mark.parametrize("phrase", [
    "yesterday", "today", "tomorrow", "tonight", "3 days ago", "in two days", "next Monday",
    "last week", "2 weeks ago", "last month", "this year", "昨天", "上周", "上个月", "去年",
    "昨日", "先週", "来月", "어제", "지난주", "ayer", "la semana pasada", "ontem", "gestern",
    "letzte Woche", "aujourd'hui", "la semaine dernière", "le mois dernier", "ieri", "вчера",
    "на прошлой неделе", "в прошлом месяце",
])
def test_every_date_phrase_passes_the_quick_filter_and_is_rewritten(phrase):
    from dream.engines.offline.dates import has_relative_dates, rewrite_line

    assert has_relative_dates([f"x {phrase} y"])
    new, found, left = rewrite_line(f"x {phrase} y", date(2026, 3, 4))
    assert [p for p, _ in found] == [phrase] and phrase not in new and left == []


@pytest.mark.parametrize("said, day, written, asks", [
    ("it broke yesterday", date(2026, 11, 20), "it broke on 2026-11-19", False),
    ("in use today", date(2026, 11, 20), "in use as of 2026-11-20", False),
    ("asked last week", date(2026, 11, 20), "asked in the week of 2026-11-09", False),
    ("until tomorrow", date(2026, 11, 20), "until 2026-11-21", False),
    ("the audit is next Friday", date(2026, 11, 17), "the audit is next Friday", True),  # in 3 days, or 10?
    ("the audit is next Friday", date(2026, 11, 21), "the audit is on 2026-11-27", False),
    ("the freeze starts next Monday", date(2026, 11, 20), "the freeze starts on 2026-11-23", False),
    ("la demo es mañana", date(2026, 11, 20), "la demo es el 2026-11-21", False),
    ("por la mañana", date(2026, 11, 20), "por la mañana", False),
    # what names no date here: a dotted name, a quotation (what someone said then)
    ("Tomorrow.io serves the forecast", date(2026, 11, 20), "Tomorrow.io serves the forecast", False),
    ("the joke “we'll fix it tomorrow” stuck", date(2026, 11, 20), "the joke “we'll fix it tomorrow” stuck", False),
    ('he said "done by tomorrow", it broke yesterday', date(2026, 11, 20),
     'he said "done by tomorrow", it broke on 2026-11-19', False),
])
def test_dates_read_as_phrases_and_ambiguous_ones_are_left_as_written(said, day, written, asks):
    from dream.engines.offline.dates import rewrite_line

    new, found, left = rewrite_line(said, day)
    assert new == written
    assert bool(left) is asks and bool(found) is (written != said)


def test_blocking_misses_no_pair_that_brute_force_finds():
    import random

    from rapidfuzz import fuzz

    from dream.engines.offline.similarity import normalize

    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(3000)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    texts: list[str] = []
    for _ in range(600):
        if texts and rng.random() < 0.15:
            words = rng.choice(texts).split()
            for _ in range(rng.randint(1, 3)):
                words[rng.randrange(len(words))] = rng.choice(vocabulary[:200])
            texts.append(" ".join(words))
        else:
            texts.append(" ".join(rng.choices(vocabulary, weights, k=rng.randint(20, 50))))
    norms = [normalize(t) for t in texts]
    brute = {(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))
             if fuzz.ratio(norms[i], norms[j]) >= 90}
    found = {(i, j) for i, j, _ in similar_pairs(texts, 90)}
    assert len(brute) > 50 and found == brute


@pytest.mark.parametrize("said, spoken", [
    ("I prefer uv over pip", "prefers uv over pip"),
    ("I'm on the payments team", "is on the payments team"),
    ("I don't like emoji in commits", "doesn't like emoji in commits"),
    ("I watch my inbox twice a day", "watches their inbox twice a day"),
    ("the API is versioned", "the API is versioned"),
])
def test_new_memories_speak_of_the_user_in_the_third_person(said, spoken):
    from dream.engines.offline.text import short_slug, third_person

    assert third_person(said) == spoken
    assert len(short_slug(spoken)) <= 30 and "_" in short_slug(spoken)


def test_entry_titled_by_its_file_name_gets_the_memory_title(tmp_path):
    tree = {"MEMORY.md": "- [user_role.md](user_role.md) — role\n- [Config-Pattern](c.md) — config\n".encode(),
            "user_role.md": topic("Backend developer", "role", "user", "The user writes Go."),
            "c.md": topic("c", "config", "project", "Inline Config.cs.")}
    out, result = run(tmp_path, tree)
    assert actions(result) == [("retitled", "MEMORY.md")]
    expected = "- [Backend developer](user_role.md) — role\n- [Config-Pattern](c.md) — config\n"
    assert out["MEMORY.md"] == expected.encode()


@pytest.mark.parametrize("sentence, kind", [
    ("can you forget the note about the staging VPN?", "forget"),
    ("could you remember that I'm in CET?", "remember"),
    ("Delete the memory about Heroku", "forget"),
    ("remove the Heroku note", "forget"),
    ("note that the CI runners are ARM64", "remember"),
    ("wait, the admin UI is on 8443 not 8080", "correction"),
    ("we indent with 4 spaces now, not 2 spaces", "update"),
    ("remove the unused imports", None),
    ("this is not working", None),
    ("I always forget the flags for tar", None),
    ("Can you remember the port?", None),
    # asked as a question, in the languages' own forms ([words] asked, [leads] asked_*)
    ("would you mind forgetting the feature flags memory?", "forget"),
    ("can you delete the memory about Heroku?", "forget"),
    ("can you delete the temp dir?", None),  # a task: no memory named
    ("kannst du dir merken, dass die Staging-DB auf Port 5433 läuft?", "remember"),
    ("weißt du noch, auf welchem Port die API läuft?", None),
    ("¿puedes guardar en memoria que staging usa el puerto 5433?", "remember"),
    ("¿te acuerdas de qué puerto usa la API?", None),
    ("tu peux retenir que la base écoute sur 5433 ?", "remember"),
    ("puoi ricordarti di pushare?", None),  # "di" + a verb: a task
    ("ステージングのDBはポート5433だって覚えておいてくれる？", "remember"),
    ("APIのポート、覚えてる？", None),
    ("스테이징 DB 포트가 5433이라는 거 기억해 줄래?", "remember"),
    ("can you check why the API moved from 7000 to 7001?", None),  # a question: no update read from it
])
def test_requests_as_people_phrase_them(sentence, kind):
    found = extract(sentence)
    assert (found[0] if found else None) == kind


def test_a_change_said_without_a_lead_touches_only_a_memory_stating_the_old_value(tmp_path):
    tree = {"MEMORY.md": b"- [Office](office.md) \xe2\x80\x94 office\n",
            "office.md": topic("office", "office", "project", "The team sits on floor 3.")}
    rows = sessions(("s1", date(2026, 3, 9), "user", "we moved from the old office to the new one last month"),
                    ("s1", date(2026, 3, 9), "user", "the team sits on floor 5 now, not floor 3"))
    out, result = run(tmp_path, tree, rows)
    assert actions(result) == [("updated", "office.md")]
    assert "The team sits on floor 5 (was floor 3 until 2026-03-09)." in out["office.md"].decode()
    assert "reads like a change, but no memory states the old value" in result.summary


@pytest.mark.parametrize("text, title", [
    ("Always use ROUND_HALF_EVEN through `ledger.money.quantize`, don't call Decimal.quantize directly",
     "Always use ROUND_HALF_EVEN through `ledger.money.quantize`"),
    ("Don't run pip install into the system python, ever", "Don't run pip install into the system python"),
    ("Check that the nightly export has finished before you start the import",
     "Check that the nightly export has finished"),
    ("the checkout load test failed at 300 rps because the pool was capped", "Checkout load test failed at 300 rps"),
    ("the stripe live key is [REDACTED:stripe-key]", "Stripe live key"),  # not "Stripe live key is (REDACTED"
    ("the deploy key is [REDACTED:private-key] on prod", "Deploy key is on prod"),
])
def test_short_titles_read_as_titles(text, title):
    from dream.engines.offline.text import short_title

    assert short_title(text) == title


def test_an_ambiguous_date_in_a_topic_file_is_left_as_written_and_noted(tmp_path):
    tree = {"MEMORY.md": b"- [Audit](audit.md) \xe2\x80\x94 audit\n",
            "audit.md": topic("audit", "audit", "project", "The audit is next Friday.", created="2026-11-17")}
    out, result = run(tmp_path, tree)
    assert out == tree and result.changes == []
    assert result.needs_person == ["audit.md line 8: “next Friday”, written Tuesday 2026-11-17, may be 2026-11-20 or "
                                   "2026-11-27: left as written; write the date it means"]


@pytest.mark.parametrize("said, written", [
    ("la demo es el próximo viernes", "la demo es el 2026-11-27"),
    ("das Audit ist nächsten Freitag", "das Audit ist am 2026-11-27"),
    ("l'audit est vendredi prochain", "l'audit est le 2026-11-27"),
    ("a reunião é na próxima sexta-feira", "a reunião é em 2026-11-27"),
])
def test_next_weekday_in_other_languages_is_resolved_or_left_when_ambiguous(said, written):
    from dream.engines.offline.dates import has_relative_dates, rewrite_line

    assert has_relative_dates([said])
    new, found, left = rewrite_line(said, date(2026, 11, 21))  # a Saturday: the coming Friday is plain
    assert new == written and len(found) == 1 and left == []
    same, found, left = rewrite_line(said, date(2026, 11, 17))  # a Tuesday: "next Friday" may be in 3 or 10 days
    assert same == said and found == [] and [u.why for u in left] == ["may be 2026-11-20 or 2026-11-27"]


@pytest.mark.parametrize("sentence, expected", [
    ("don't forget that the demo is at 10", ("remember", "the demo is at 10")),
    ("Don't forget to run the migrations", None),  # a task for now, not a memory
    ("n'oublie pas que la démo est demain", ("remember", "la démo est demain")),
    ("vergiss nicht, dass der Server umzieht", ("remember", "der Server umzieht")),
    ("esquece o Heroku", ("forget", "o Heroku")),
    ("내일 고객 데모가 있다는 거 기억해 줘", ("remember", "내일 고객 데모가 있다")),
])
def test_dont_forget_means_remember(sentence, expected):
    assert extract(sentence) == expected


def test_every_date_row_holds_a_word_the_quick_filter_looks_for():
    """The pre-filter (each row's `needs`) never rules out a phrase its row's pattern accepts: checked on every
    literal alternative of every row, in every language file."""
    from dream.engines.offline.dates import might_have_relative_dates, rows

    checked = 0
    for row in rows():
        regex = re.sub(r"\(\?<?[!=][^()]*\)", "", row.regex)  # "(?<!大)后天": the lookaround holds no phrase
        if "(" in regex:  # groups: the phrases of the parametrized test above
            continue
        for alternative in regex.split("|"):
            assert might_have_relative_dates(alternative), (row.lang, alternative)
            checked += 1
    assert checked > 60


def test_a_date_row_without_its_needs_is_a_one_line_error(tmp_path):
    from dream.engines.offline.phrases import languages
    from dream.errors import BadInput

    (tmp_path / "xx.toml").write_text('[[dates.row]]\nregex = "gisteren"\nmeans = "day"\n', encoding="utf-8")
    with pytest.raises(BadInput, match=r"xx.toml line 1: .*needs"):  # the schema names the file, line and key
        languages(str(tmp_path))


@pytest.mark.parametrize("a, b, opposed", [
    ("use mocks for the payment gateway in unit tests", "don't mock the payment gateway in unit tests", True),
    ("squash a PR's commits when merging", "never squash a PR's commits when merging; keep them all", True),
    ("write commit subjects under 72 characters, no trailing period", "subjects: 72 characters, no period at the end",
     False),
    ("use full variable names", "full variable names, no abbreviations", False),
    ("keine kurzen Variablennamen wie $tmp", "Variablennamen ausschreiben, keine kurzen Namen", False),
    ("ログは構造化JSONで出力する", "ログは構造化JSONで出力しない", True),
])
def test_a_rule_that_denies_what_the_other_says_is_its_opposite(a, b, opposed):
    from dream.engines.offline.polarity import opposite

    assert opposite(a, b) is opposed and opposite(b, a) is opposed


def test_memories_said_in_other_words_are_found_among_many_and_other_facts_are_not():
    from dream.engines.offline.similarity import described_pairs

    docs = [(f"Service {i} owner", f"the service number {i} belongs to team {i % 17} and pages its on-call",
             f"Service {i} is run by team {i % 17}.") for i in range(600)]
    docs.append(("No short variable names", "never use one-letter variable names like $r, $q; always the full name",
                 "Never name a variable `$r` or `$q`: write `$record`, `$query`."))
    docs.append(("Spelled out variables", "never use short throwaway variable names like $q, $r in callbacks; "
                 "write the full name", "Write `$query`, `$record`, even in one-liners."))
    docs.append(("Dev server port", "the dev server listens on port 8080 locally, started by make dev", ""))
    docs.append(("Database port", "the local database listens on port 5432, started by make dev", ""))
    found = {(i, j) for i, j, _ in described_pairs(docs)}
    assert found == {(600, 601)}


def test_a_rule_a_memory_states_in_another_language_is_asked_about_not_filed_again(tmp_path):
    tree = {"MEMORY.md": b"- [Package manager](feedback_pnpm.md) - use pnpm, never npm\n",
            "feedback_pnpm.md": topic("Package manager", "use pnpm, never npm", "feedback",
                                      "Use pnpm in the web app, never npm.")}
    rows = sessions(("s1", TODAY, "user", "Immer pnpm benutzen, niemals npm!"),
                    ("s1", TODAY, "user", "Always pin pnpm to 9.12 in CI."))  # a number the memory lacks: new
    out, result = run(tmp_path, tree, rows)
    assert len([path for action, path in actions(result) if action == "created"]) == 1
    assert not any("Immer pnpm" in text.decode() for text in out.values())
    assert any("in another language" in ask and "feedback_pnpm.md" in ask for ask in result.needs_person)


@pytest.mark.parametrize("text, names", [
    ("all of this for next time", False),
    ("das alles für das nächste Mal", False),
    ("今日のこと全部", False),
    ("이거 다", False),
    ("this conversation", False),
    ("the staging database listens on port 5433", True),
    ("ステージングのDBはポート5433", True),
    ("everything in infra/ is managed by Terraform", True),
])
def test_a_remember_that_names_no_fact_is_told_apart(text, names):
    from dream.engines.offline.similarity import names_a_fact

    assert names_a_fact(text) is names


def test_a_sweeping_remember_files_nothing_and_asks_a_person(tmp_path):
    tree = {"MEMORY.md": b"- [Office](office.md) \xe2\x80\x94 office\n",
            "office.md": topic("office", "office", "project", "The team sits on floor 3.")}
    out, result = run(tmp_path, tree, sessions(("s1", date(2026, 3, 9), "user", "remember all of this for next time")))
    assert out == tree and result.changes == []
    assert any("names no fact" in line for line in result.needs_person)


@pytest.mark.parametrize("typed, read", [
    ("remember!!! staging db = port 5433", ("remember", "staging db = port 5433")),
    ("remember... the staging db is on 5433", ("remember", "the staging db is on 5433")),
    ("覚えておいて！！ステージングDBはポート5433", ("remember", "ステージングDBはポート5433")),
    ("pls pls remember the staging db is on 5433 🙏", ("remember", "the staging db is on 5433 🙏")),
    ("IMPORTANT: always run the migrations before the tests", ("rule", "Always run the migrations before the tests")),
    ("NEVER MIND", None),
    ("remember. that was a long day", None),  # "remember." then a sentence: the lead asks for it
])
def test_emphasis_around_a_lead_keeps_the_request(typed, read):
    from dream.engines.offline.requests import sentences

    found = [extract(s) for s in sentences(typed)]
    assert [f for f in found if f] == ([read] if read else [])


@pytest.mark.parametrize("sentence, kind", [
    ("whenever you touch the payments code, run the integration tests too", "rule"),
    ("every time you open a PR, add the Jira ticket to the title", "rule"),
    ("in future, please write commit messages in English", "rule"),
    ("in future releases we drop Python 3.9", None),  # no comma: a plan stated, not an instruction
    ("whenever you're ready, run the build", None),
    ("ab jetzt läuft es wieder", None),
    ("à partir de maintenant, c'est bon", None),
    ("ab jetzt bitte immer Conventional Commits verwenden", "rule"),
])
def test_standing_instructions_beside_statuses(sentence, kind):
    found = extract(sentence)
    assert (found[0] if found else None) == kind


@pytest.mark.parametrize("text, days", [
    ("Mobile releases ship on Thursdays.", {3}),
    ("on ne publie plus le jeudi", {3}),
    ("Releases gehen donnerstags raus, Hotfixes montags", {0, 3}),
    ("the release train leaves weekly", set()),
])
def test_weekdays_are_named_in_any_language(text, days):
    from dream.engines.offline.dates import weekdays_named

    assert weekdays_named(text) == days


def test_a_remember_denying_a_weekday_a_memory_states_in_another_language_asks_a_person(tmp_path):
    tree = {"MEMORY.md": "- [Release day](release.md) — releases ship on Thursdays\n".encode(),
            "release.md": topic("Release day", "releases ship on Thursdays", "project", "Mobile releases ship on Thursdays.")}
    out, result = run(tmp_path, tree, sessions(("s1", date(2026, 3, 9), "user", "retiens qu'on ne publie plus le jeudi")))
    assert out == tree and result.changes == []
    assert any("says “not” beside a name" in line for line in result.needs_person)


def test_an_index_link_in_angle_brackets_points_at_its_file(tmp_path):
    tree = {"MEMORY.md": "- [Flags](<project flags.md>) — flags live in LaunchDarkly\n".encode(),
            "project flags.md": topic("Flags", "flags live in LaunchDarkly", "project", "Flags live in LaunchDarkly.")}
    out, result = run(tmp_path, tree)
    assert out == tree and result.changes == []


@pytest.mark.parametrize("sentence", [
    "ahora el owner de payments es Marco, no Priya",
    "c'est Marco qui gère payments maintenant, plus Priya",
    "quem cuida de payments é o Marco agora, não a Priya",
])
def test_r_now_not_w_reads_as_a_change_in_romance_languages(sentence):
    found = extract(sentence)
    assert found is not None and found[0] == "update"


NAMES_SHORT = topic("Kurze Variablennamen", "keine kurzen Variablennamen wie $x, $tmp oder $cnt verwenden", "feedback",
                    "Keine kurzen Variablennamen wie `$x`, `$tmp` oder `$cnt` verwenden, auch nicht in Schleifen.")
NAMES_LONG = topic("Variablennamen ausschreiben", "Variablennamen immer ausschreiben, keine kurzen Namen wie $tmp oder $cnt",
                   "feedback", "Variablennamen immer ausschreiben: `$counter` statt `$cnt`, keine kurzen Namen.")


def test_a_near_duplicate_pair_left_apart_is_listed_for_a_person_and_kept(tmp_path):
    # One name adds a word ("ausschreiben") the other memory never says: not merged, but a person may see one rule.
    tree = {"MEMORY.md": b"- [K](feedback_kurz.md)\n- [A](feedback_aus.md)\n",
            "feedback_kurz.md": NAMES_SHORT, "feedback_aus.md": NAMES_LONG}
    out, result = run(tmp_path, tree)
    assert out == tree and result.changes == []
    asked = [n for n in result.needs_person if "look alike" in n]
    assert len(asked) == 1 and "`feedback_kurz.md`" in asked[0] and "`feedback_aus.md`" in asked[0]
    assert asked[0].endswith(": merge?")


def test_two_memories_each_about_their_own_subject_are_not_listed_as_alike(tmp_path):
    # "Backend" and "Frontend" each name a subject the other never says: two memories, nothing to ask.
    tree = {"MEMORY.md": b"- [B](project_backend.md)\n- [F](project_frontend.md)\n",
            "project_backend.md": topic("Backend deploys", "backend deploys go out on Fridays after the review",
                                        "project", "The API image is built by CI and rolled out by Argo."),
            "project_frontend.md": topic("Frontend deploys", "frontend deploys go out on Fridays after the review",
                                         "project", "The static bundle is uploaded to the CDN, cache purged.")}
    out, result = run(tmp_path, tree)
    assert out == tree and not [n for n in result.needs_person if "look alike" in n]
