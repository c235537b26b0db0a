"""Shape of the demo store in ``data/demo/`` that the README quick start runs on.

The store belongs to an imaginary backend developer (Maya) working on
"ledgerline", a Python payments ledger. It is realistic on purpose, and it
carries problems planted for a dream run to find and fix. They are documented
here rather than in a README inside the store, because any ``*.md`` in the
store would be read as a memory. Each test below asserts that one of them is
really there, so editing the demo cannot silently remove what it demonstrates.

Planted problems (paths relative to ``data/demo/``):

1. Duplicates.
   - Exact: ``project_webhook_retries.md`` and ``webhook_retries.md`` are
     byte-identical, and both are indexed in ``MEMORY.md``.
   - Near: ``feedback_run_tests.md`` ("Run tests with `make test` before
     pushing.") and ``feedback_test_before_push.md`` ("Always run `make test`
     before you push.") state the same rule in other words.
2. Relative dates.
   - In topic files that carry ``created:``: "next Friday"
     (``project_release_2_4.md``), "yesterday"
     (``project_idempotency_keys.md``), "last week"
     (``project_rounding_rule.md``).
   - In session logs: "the release freeze starts next Monday"
     (``logs/2026/11/23/s09-release-freeze.md``), "shut down on Monday"
     (``logs/2026/11/19/s08-jenkins-cleanup.md``), "yesterday"
     (``logs/2026/11/26/…-webhook-dead-letters.md``).
3. Broken pointers in ``MEMORY.md``.
   - Moved: ``oncall_runbook.md`` does not exist at the root; the file lives
     at ``ops/oncall_runbook.md`` (fix the link).
   - Gone: ``kafka_consumer_lag.md`` exists nowhere (its line says what it held: the file comes back
     from that line, still indexed).
4. Over-long index line: the "Small PRs" line is longer than 150 characters.
5. Orphan: ``project_fx_rates_cache.md`` has no index line.
6. Team memories: ``team/api_conventions.md`` and ``team/code_review.md``
   (pruned conservatively, nothing promoted into ``team/``).

Signal in the nine session logs under ``logs/2026/11/`` (16th to 26th):

- remember: staging needs the VPN (s07), uv over pip (64ea5096…), release
  freeze next Monday (s09), dead letters purged after 30 days (f39373ec…);
- forget: "forget the note about the old Jenkins server" (s08) — the memory
  is ``reference_jenkins.md``;
- correction: "actually, the DB is Postgres 16 not 15" (cf029013…) — the
  memory ``project_database.md`` says Postgres 15;
- always / never / don't: regression tests for idempotency, ROUND_HALF_EVEN
  via ``ledger.money.quantize``, no raw DDL in migrations, no .env commits,
  no pip into the system Python;
- fake secrets for redaction: a GitHub token (``ghp_`` + 36) in s07 and an
  Anthropic key (``sk-ant-api03-…AA``) in 9c1694ad….
"""

from __future__ import annotations

import re
from datetime import date

import pytest
import yaml
from rapidfuzz import fuzz

from dream.store.tree import INDEX_NAME, read_tree
from helpers.stores import DEMO

LOGS = DEMO / "logs"
MEMORY_TYPES = {"user", "feedback", "project", "reference"}
INDEX_LINE = re.compile(r"^- \[(?P<title>[^\]]+)\]\((?P<target>[^)]+)\) — (?P<hook>.+)$")
LOG_NAME = re.compile(
    r"^logs/(?P<y>\d{4})/(?P<m>\d{2})/(?P<d>\d{2})/"
    r"(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|s\d+)"
    r"-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.md$"
)
LOG_PREFIXES = ("> ", "< ", ". ")


# ---------------------------------------------------------------- helpers


def split_frontmatter(text: str) -> tuple[dict, str]:
    """Return (frontmatter mapping, body) of a topic file; fail if it has none."""
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    assert match, "topic file without YAML frontmatter"
    meta = yaml.safe_load(match.group(1))
    assert isinstance(meta, dict)
    return meta, match.group(2)


def topic_files() -> dict[str, str]:
    """Every memory file except the index, as {relpath: text}."""
    tree = read_tree(DEMO)
    return {rel: data.decode("utf-8") for rel, data in tree.items() if rel != INDEX_NAME}


def index_lines() -> list[str]:
    return (DEMO / INDEX_NAME).read_text(encoding="utf-8").splitlines()


def index_targets() -> list[str]:
    return [m["target"] for line in index_lines() if (m := INDEX_LINE.match(line))]


def log_files() -> dict[str, str]:
    return {
        p.relative_to(DEMO).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(LOGS.rglob("*.md"))
    }


def log_entries(text: str) -> list[tuple[str, str]]:
    """Split a log into (prefix, text) entries; unprefixed lines continue the last one."""
    entries: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line[:2] in LOG_PREFIXES:
            entries.append((line[0], line[2:]))
        else:
            assert entries, "log starts with a continuation line"
            prefix, body = entries[-1]
            entries[-1] = (prefix, body + "\n" + line.strip())
    return entries


def user_requests() -> list[str]:
    return [body for text in log_files().values() for p, body in log_entries(text) if p == ">"]


def requests_matching(pattern: str) -> list[str]:
    return [r for r in user_requests() if re.search(pattern, r, re.IGNORECASE)]


# ---------------------------------------------------------------- overall shape


def test_every_file_is_utf8_lf_with_trailing_newline() -> None:
    files = [p for p in DEMO.rglob("*") if p.is_file()]
    assert len(files) >= 30
    for path in files:
        data = path.read_bytes()
        data.decode("utf-8")  # raises on bad encoding
        assert b"\r" not in data, path
        assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path


def test_no_readme_or_non_markdown_inside_the_store() -> None:
    names = {p.name.lower() for p in DEMO.rglob("*") if p.is_file()}
    assert "readme.md" not in names
    assert all(n.endswith(".md") for n in names)


def test_memory_is_index_plus_at_least_twenty_topics_and_no_logs() -> None:
    tree = read_tree(DEMO)
    assert INDEX_NAME in tree
    assert not any(rel.startswith("logs/") for rel in tree)
    assert len(topic_files()) >= 20


def test_topic_frontmatter_is_complete_and_covers_all_types() -> None:
    seen_types = set()
    created = 0
    for rel, text in topic_files().items():
        meta, body = split_frontmatter(text)
        assert meta.get("name") and meta.get("description"), rel
        assert meta.get("type") in MEMORY_TYPES, rel
        assert body.strip(), rel
        seen_types.add(meta["type"])
        if "created" in meta:
            assert isinstance(meta["created"], date), rel
            created += 1
    assert seen_types == MEMORY_TYPES
    assert 0 < created < len(topic_files())  # some, not all, carry a date


def test_index_lines_have_the_documented_form() -> None:
    lines = [line for line in index_lines() if line.strip()]
    assert lines[0] == "# Memory"
    assert all(INDEX_LINE.match(line) for line in lines[1:])
    assert len(lines) <= 200


# ---------------------------------------------------------------- planted problems


def test_1_exact_duplicates_are_both_indexed() -> None:
    topics = topic_files()
    a, b = "project_webhook_retries.md", "webhook_retries.md"
    assert topics[a] == topics[b]
    assert {a, b} <= set(index_targets())


def test_1_near_duplicates_say_the_same_thing_in_other_words() -> None:
    topics = topic_files()
    first = split_frontmatter(topics["feedback_run_tests.md"])[1].strip().splitlines()[0]
    second = split_frontmatter(topics["feedback_test_before_push.md"])[1].strip().splitlines()[0]
    assert first != second
    assert "`make test`" in first and "`make test`" in second
    assert fuzz.token_set_ratio(first, second) >= 60


@pytest.mark.parametrize(
    ("rel", "phrase"),
    [
        ("project_release_2_4.md", "next Friday"),
        ("project_idempotency_keys.md", "yesterday"),
        ("project_rounding_rule.md", "last week"),
    ],
)
def test_2_relative_dates_in_dated_topic_files(rel: str, phrase: str) -> None:
    meta, body = split_frontmatter(topic_files()[rel])
    assert isinstance(meta.get("created"), date)
    assert phrase.lower() in body.lower()


def test_2_relative_date_inside_a_remember_request() -> None:
    assert requests_matching(r"\bremember\b.*\bnext monday\b")


def test_3_broken_pointers_one_moved_one_gone() -> None:
    tree = read_tree(DEMO)
    missing = [t for t in index_targets() if t not in tree]
    moved = {t: [rel for rel in tree if rel.endswith("/" + t)] for t in missing}
    assert moved == {"oncall_runbook.md": ["ops/oncall_runbook.md"], "kafka_consumer_lag.md": []}


def test_4_one_index_line_is_over_150_characters() -> None:
    long_lines = [line for line in index_lines() if len(line) > 150]
    assert len(long_lines) == 1
    assert "(feedback_small_prs.md)" in long_lines[0]


def test_5_orphan_topic_file_is_not_indexed() -> None:
    indexed = set(index_targets())
    orphans = {rel for rel in topic_files() if rel not in indexed}
    # ops/oncall_runbook.md is "orphaned" only through the moved pointer (problem 3).
    assert orphans == {"project_fx_rates_cache.md", "ops/oncall_runbook.md"}


def test_6_team_folder_holds_two_shared_memories() -> None:
    team = {rel: text for rel, text in topic_files().items() if rel.startswith("team/")}
    assert set(team) == {"team/api_conventions.md", "team/code_review.md"}
    for text in team.values():
        assert split_frontmatter(text)[0]["type"] in MEMORY_TYPES


# ---------------------------------------------------------------- session logs


def test_at_least_eight_session_logs_with_valid_names_and_dates() -> None:
    logs = log_files()
    assert len(logs) >= 8
    ids = []
    for rel in logs:
        match = LOG_NAME.match(rel)
        assert match, rel
        day = date(int(match["y"]), int(match["m"]), int(match["d"]))
        assert date(2026, 11, 1) <= day < date(2026, 11, 29), rel
        ids.append(match["id"])
    assert len(set(ids)) == len(ids)
    assert any(i.startswith("s") for i in ids) and any("-" in i for i in ids)


def test_logs_use_the_three_prefixes_and_continuations() -> None:
    continuations = 0
    for rel, text in log_files().items():
        entries = log_entries(text)
        assert {p for p, _ in entries} == {">", "<", "."}, rel
        continuations += sum("\n" in body for _, body in entries)
    assert continuations >= 5


def test_logs_carry_remember_forget_always_never_and_a_correction() -> None:
    assert len(requests_matching(r"\bremember\b")) >= 3
    assert requests_matching(r"\balways\b")
    assert requests_matching(r"\b(never|don't)\b")
    assert requests_matching(r"\bactually\b.*postgres 16 not 15")


def test_correction_contradicts_an_existing_memory() -> None:
    _, body = split_frontmatter(topic_files()["project_database.md"])
    assert "Postgres 15" in body


def test_forget_request_refers_to_an_existing_memory() -> None:
    (request,) = requests_matching(r"\bforget\b")
    assert "jenkins" in request.lower()
    meta, body = split_frontmatter(topic_files()["reference_jenkins.md"])
    assert "Jenkins server" in body


def test_fake_secrets_are_planted_in_logs_only() -> None:
    anthropic = re.compile(r"sk-ant-api03-[A-Za-z0-9_-]{93}AA")
    github = re.compile(r"\bghp_[A-Za-z0-9]{36}\b")
    log_text = "\n".join(log_files().values())
    assert anthropic.search(log_text) and github.search(log_text)
    memory_text = "\n".join(topic_files().values())
    assert not anthropic.search(memory_text) and not github.search(memory_text)
