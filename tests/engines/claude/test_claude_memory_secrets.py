"""Secrets already in memory files: never sent to the model, never destroyed by its edits.

The secrets are the hostile-input corpus (tests/reliability/data/secrets.tsv).
Unit checks on the run's `SecretTable` and the memory tool, then the whole
path: `dream run --engine claude` against the fake Messages API, on a demo
store whose index and topic files hold planted secrets of many kinds, and
`dream accept`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401

from dream.engines.claude.memory_tool import StagingMemoryTool
from dream.engines.claude.secrets import SecretTable, without_numbers

DATA = Path(__file__).parents[2] / "reliability" / "data" / "secrets.tsv"


def corpus() -> list[tuple[str, str, str]]:
    """(kind, sentence, secret) rows; private keys have their newlines escaped in the file."""
    rows = []
    for line in DATA.read_text().splitlines():
        if line and not line.startswith("#"):
            kind, sentence, secret = line.split("\t")
            rows.append((kind, sentence.replace("\\n", "\n"), secret.replace("\\n", "\n")))
    return rows


SECRETS = corpus()


def first(kind: str) -> tuple[str, str]:
    """The first (sentence, secret) of a kind in the corpus."""
    return next((sentence, secret) for k, sentence, secret in SECRETS if k == kind)


def pieces(secret: str) -> list[str]:
    """The secret and, for a long one, 12 characters from its middle (a leak cut short)."""
    if len(secret) < 24:
        return [secret]
    middle = len(secret) // 3
    return [secret, secret[middle:middle + 12]]


# -- the table -------------------------------------------------------------------


def test_every_corpus_secret_is_hidden_and_restored_byte_for_byte() -> None:
    table = SecretTable()
    text = "\n".join(f"- {sentence}" for _, sentence, _ in SECRETS) + "\n"

    shown = table.hide(text)

    assert [s for _, _, s in SECRETS if any(p in shown for p in pieces(s))] == []
    assert table.restore(shown) == text
    assert table.hide(shown) == shown  # a numbered marker is never taken for a secret


def test_one_secret_keeps_one_number_wherever_it_appears() -> None:
    sentence, secret = first("github-token")
    table = SecretTable()

    once, again = table.hide(sentence), table.hide(f"as said: {sentence}")

    (marker,) = set(re.findall(r"\[REDACTED:[a-z0-9-]+#\d+\]", once + again))
    assert marker.endswith("#1]") and len(table) == 1


def test_a_secret_the_patterns_miss_in_another_context_is_still_hidden() -> None:
    sentence, secret = first("password-assignment")
    table = SecretTable()
    table.hide(sentence)

    assert secret not in table.hide(f"-{secret} was in the old version")


def test_session_markers_and_unknown_numbers_are_never_restored() -> None:
    table = SecretTable()
    table.hide(first("github-token")[0])

    written = table.restore("from a log: [REDACTED:github-token] and a made-up [REDACTED:github-token#7]")

    assert written == "from a log: [REDACTED:github-token] and a made-up [REDACTED:github-token]"


def test_the_summary_loses_its_numbers_not_its_kinds() -> None:
    assert without_numbers("- kept [REDACTED:stripe-key#3]") == "- kept [REDACTED:stripe-key]"


# -- the memory tool -------------------------------------------------------------


KEY_SENTENCE, KEY = first("rsa-private-key")
PW_SENTENCE, PW = first("password-assignment")


@pytest.fixture
def staged(tmp_path: Path) -> tuple[StagingMemoryTool, Path]:
    body = f"---\nname: keys\ndescription: keys\ntype: reference\n---\nintro\n{KEY_SENTENCE}\n{PW_SENTENCE}\nend\n"
    (tmp_path / "keys.md").write_text(body)
    return StagingMemoryTool(tmp_path), tmp_path


def call(tool: StagingMemoryTool, **input: Any) -> str:
    return str(tool.call(input))


def test_view_shows_markers_and_the_line_numbers_of_what_it_shows(staged) -> None:
    tool, _ = staged

    shown = call(tool, command="view", path="/memories/keys.md")

    assert KEY not in shown and PW not in shown
    assert "     7\tthe deploy key is [REDACTED:private-key#1]" in shown  # the key block is one line
    assert "     8\tthe db password is password=[REDACTED:password#2]" in shown and "     9\tend\n" in shown


def test_edits_on_the_shown_text_keep_the_secrets_byte_for_byte(staged) -> None:
    tool, root = staged
    shown = call(tool, command="view", path="/memories/keys.md")
    pw_line = next(line.split("\t", 1)[1] for line in shown.splitlines() if "#2]" in line)

    call(tool, command="str_replace", path="/memories/keys.md", old_str=pw_line, new_str=pw_line + " (staging)")
    call(tool, command="insert", path="/memories/keys.md", insert_line=7, insert_text="after the key")
    call(tool, command="create", path="/memories/copy.md", file_text="---\nname: c\ndescription: c\ntype: reference\n"
         "---\nthe same key: [REDACTED:private-key#1]\n")

    after = (root / "keys.md").read_text()
    assert after == (f"---\nname: keys\ndescription: keys\ntype: reference\n---\nintro\n{KEY_SENTENCE}\n"
                     f"after the key\n{PW_SENTENCE} (staging)\nend\n")  # line 7 was the key as the model saw it
    assert KEY in (root / "copy.md").read_text()


def test_a_marker_never_makes_a_file_name(staged) -> None:
    tool, root = staged
    call(tool, command="view", path="/memories/keys.md")

    for name in ("[REDACTED:private-key#1].md", "[REDACTED:password].md"):
        with pytest.raises(ToolError, match="redaction marker"):
            call(tool, command="create", path=f"/memories/{name}", file_text="x")
    assert sorted(p.name for p in root.iterdir()) == ["keys.md"]


def test_a_secret_in_a_file_name_is_hidden_and_the_shown_name_still_works(tmp_path: Path) -> None:
    _, token = first("github-token")
    (tmp_path / f"ci-{token}.md").write_text("---\nname: ci\ndescription: ci\ntype: reference\n---\nbody\n")
    tool = StagingMemoryTool(tmp_path)

    listing = call(tool, command="view", path="/memories")
    shown = next(line.split("\t")[1] for line in listing.splitlines() if line.endswith(".md"))

    assert token not in listing and "[REDACTED:" in shown
    assert "body" in call(tool, command="view", path=shown)
    with pytest.raises(ToolError) as refused:
        call(tool, command="rename", old_path=shown, new_path=shown.replace("ci-", "cd-"))
    assert token not in str(refused.value)


# -- the whole run ----------------------------------------------------------------

INDEX_KINDS = ("github-token", "aws-access-key-id")
TOPIC_KINDS = ("stripe-secret-key", "stripe-webhook-secret", "rsa-private-key", "password-assignment", "jwt",
               "slack-webhook", "sendgrid-key", "url-password")
UNTOUCHED_KINDS = ("env-export-unknown-name", "huggingface-token", "curl-user")
SESSION_SECRET = "ghp_" + "Zq81Lm04Xv7Tb2Nc9Wd5" * 2  # said in a session: must stay redacted


def plant(store: Path) -> dict[str, str]:
    """Secrets in the index, in a topic the model edits and in one it only reads; the files' bytes before."""
    index = (store / "MEMORY.md").read_text()
    for target, kind in zip(("deploy.yml for staging and prod", "reports to the replica"), INDEX_KINDS):
        index = index.replace(target, f"{target}; key {first(kind)[1]}")  # lines stay under 150 characters
    (store / "MEMORY.md").write_text(index)
    with (store / "reference_stripe.md").open("a") as topic:
        topic.write("".join(f"\n{first(kind)[0]}\n" for kind in TOPIC_KINDS))
    with (store / "project_database.md").open("a") as topic:
        topic.write("".join(f"\n{first(kind)[0]}\n" for kind in UNTOUCHED_KINDS))
    log = store / "logs" / "2026" / "11" / "18" / "sec9-keys.md"
    log.write_text(f"> remember that the release bot token is {SESSION_SECRET}\n< Noted.\n")
    return {name: (store / name).read_text() for name in ("MEMORY.md", "reference_stripe.md", "project_database.md")}


def tool_result_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                out.extend([content] if isinstance(content, str) else [b.get("text", "") for b in content or []])
    return out


def edits(body: dict[str, Any]) -> Reply:
    """Edit the topic as the model saw it: one line holding a marker, another line, a new file with markers."""
    sent = json.dumps(body)
    (view,) = [t for t in tool_result_texts(body) if t.startswith(("Here's the content of /memories/reference_stripe",
                                                                     "/memories/reference_stripe.md is shown in full"))]
    lines = [line.split("\t", 1)[1] for line in view.splitlines()[1:] if "\t" in line]
    shown = re.search(r"lines (\d+)-(\d+)", view)
    if shown:  # a re-read: the text is where the first message shows it
        first = body["messages"][0]["content"][0]["text"].split("\n")
        lines = first[int(shown.group(1)) - 1:int(shown.group(2))]
    stripe_line = next(line for line in lines if "[REDACTED:stripe-key#" in line)
    index_token = re.search(r"\[REDACTED:github-token#\d+\]", sent).group(0)  # from the index in the first message
    session_marker = "[REDACTED:github-token]"  # as read_session showed it
    assert session_marker in sent
    new = ("---\nname: reference_release_bot\ndescription: tokens the release bot uses\ntype: reference\n---\n"
           f"CI uses {index_token}; the release bot token is {session_marker}.\n")
    return Reply([
        memory("str_replace", path="/memories/reference_stripe.md", old_str=stripe_line,
               new_str=stripe_line + " (rotated yearly)"),
        memory("str_replace", path="/memories/reference_stripe.md", old_str="Card payments go through Stripe.",
               new_str="Card payments go through Stripe (acquirer since 2026-10-09)."),
        memory("create", path="/memories/reference_release_bot.md", file_text=new),
    ])


def test_memory_secrets_never_reach_the_api_and_survive_the_accept(demo_store: Path, cli,
                                                                   fake_api: FakeAnthropic) -> None:
    before = plant(demo_store)
    fake_api.play(
        Reply([memory("view", path="/memories/reference_stripe.md"),
               memory("view", path="/memories/project_database.md"),
               tool_use("read_session", session_id="sec9")]),
        edits,
        Reply([text("- updated reference_stripe.md: dated the acquirer; [REDACTED:stripe-key#3] is rotated yearly\n"
                    "- created reference_release_bot.md: the bot's tokens")]),
    )

    run = cli("run", "--store", str(demo_store), "--engine", "claude", "--force", "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "proposed", run.json
    assert fake_api.protocol_errors == [] and not any(r.get("is_error") for r in fake_api.tool_results())
    sent = json.dumps(fake_api.requests, ensure_ascii=False)
    planted = [first(k)[1] for k in (*INDEX_KINDS, *TOPIC_KINDS, *UNTOUCHED_KINDS)] + [SESSION_SECRET]
    assert [s for s in planted if any(p in sent for p in pieces(s))] == []
    assert "#1]" in sent  # the model did see numbered markers

    accepted = cli("accept", run.json["proposal_id"], "--store", str(demo_store), "--json")

    assert accepted.code == 0, accepted.stderr
    assert (demo_store / "project_database.md").read_text() == before["project_database.md"]  # untouched
    topic = (demo_store / "reference_stripe.md").read_text()
    stripe_sentence = first("stripe-secret-key")[0]
    assert topic == (before["reference_stripe.md"]
                     .replace("Card payments go through Stripe.", "Card payments go through Stripe (acquirer since "
                                                                    "2026-10-09).")
                     .replace(stripe_sentence, stripe_sentence + " (rotated yearly)"))  # each secret byte for byte
    index = (demo_store / "MEMORY.md").read_text()
    assert all(f"; key {first(kind)[1]}\n" in index for kind in INDEX_KINDS)
    bot = (demo_store / "reference_release_bot.md").read_text()
    assert first("github-token")[1] in bot and "release bot token is [REDACTED:github-token]." in bot
    report = (demo_store / ".dream" / "proposals").rglob("report.*")
    assert not any(re.search(r"REDACTED:[a-z0-9-]+#", p.read_text()) for p in report)
    stored = [p for p in demo_store.rglob("*") if p.is_file() and "logs" not in p.parts]
    assert not any(SESSION_SECRET.encode() in p.read_bytes() for p in stored)


def test_a_secret_in_a_log_file_name_is_redacted_wherever_the_title_is_shown(tmp_path: Path) -> None:
    from datetime import date

    import polars as pl
    from helpers.claude_store import Catalog

    from dream.engines.claude.log_tools import make_log_tools
    from dream.engines.claude.prompts import render_dream

    _, token = first("github-token")
    catalog = [Catalog("s1", date(2026, 11, 10), f"deploy with {token}", 60)]
    frame = pl.DataFrame({"session": ["s1"], "date": [date(2026, 11, 10)], "seq": [1], "role": ["user"],
                          "text": ["ship it"]})
    listed = make_log_tools(frame, catalog)[0].call({})
    first_message = render_dream(tmp_path, catalog, date(2026, 11, 12), None, frame, None)
    catalog_only = render_dream(tmp_path, catalog, date(2026, 11, 12), None, None, None)

    for shown in (listed, first_message, catalog_only):
        assert token not in shown and "deploy with [REDACTED:github-token]" in shown


def test_the_first_message_hides_the_index_names_and_the_diff_with_one_numbering(tmp_path: Path) -> None:
    from datetime import date

    from dream.engines.claude.prompts import render_dream

    index_sentence, index_secret = first("aws-access-key-id")
    _, name_secret = first("github-token")
    diff_sentence, diff_secret = first("url-password")
    (tmp_path / "MEMORY.md").write_text(f"- [CI](ci-{name_secret}.md) — {index_sentence}\n")
    (tmp_path / f"ci-{name_secret}.md").write_text("---\nname: ci\ndescription: ci\ntype: reference\n---\nci\n")
    table = SecretTable()

    message = render_dream(tmp_path, [], date(2026, 11, 12), None, None, f"-{diff_sentence}\n+{index_sentence}\n",
                           hide=table.hide)

    assert [s for s in (index_secret, name_secret, diff_secret) if s in message] == []
    assert len(table) == 3 and message.count("[REDACTED:aws-access-key-id#") == 2  # index and diff: one number
