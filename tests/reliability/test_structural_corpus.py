"""Issue 38 item 4: secrets that only their place gives away, against everything dream writes.

The corpus (data/structural_secrets.toml, rendered by tests/helpers/secret_corpus.py) holds 300+ secrets of 100+ kinds
in five classes: password flags of 20+ command-line tools, connection calls in 5+ languages, prose in 8+
languages, secrets split over two lines or two messages, and secrets typed into agents' tools. Unit checks:
each line loses its secret, in the text and the column forms alike; at most 0.5 % of 2,000+ ordinary
technical lines (data/ordinary_lines.toml: digests with prefixes, commit hashes, checksums, UUIDs, base64
images, lockfile integrity lines, flags and calls without a value) lose anything. End to end (slow): the
lines arrive in Claude Code and Codex transcripts; `dream import` writes the activity logs, `dream run`
dreams and `dream accept` writes the memories; then no secret is in any file or file name under the store,
`.dream/` included, stored objects inflated and compressed files opened. Figures: `pytest -s -k figures`.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import polars as pl
import pytest
from helpers.secret_corpus import Secret, SecretClass, Via, dream, everything_written, holds, ordinary, secrets

from dream.redaction.redact import redact, redact_column
from dream.transcripts.synthetic import ClaudeSession, CodexSession, write_jsonl

MAX_FALSE_POSITIVES = 0.005
SECRETS = secrets()
ORDINARY = ordinary()


def leaked(text: str, row: Secret) -> list[str]:
    return [s for s in row.secrets if s in text]


def test_the_corpus_is_big_varied_and_grouped_by_class():
    kinds = Counter(row.cls for row in SECRETS)
    assert len(SECRETS) >= 300 and len({row.kind for row in SECRETS}) >= 100
    assert set(kinds) == set(SecretClass)
    tools = {next(w for w in row.text.split() if not w.startswith("-") and w not in ("connect", "with"))
             for row in SECRETS if row.cls is SecretClass.CLI}
    # kinds are named by language: java-…, dotnet-…, python-… for code; prose-ko-…, prose-fr-… for prose
    code_languages = {row.kind.split("-")[0] for row in SECRETS if row.cls is SecretClass.CODE}
    prose_languages = {row.kind.split("-")[1] for row in SECRETS if row.cls is SecretClass.PROSE}
    assert len(tools) >= 20 and len(code_languages) >= 5 and len(prose_languages) >= 8, (tools, code_languages,
                                                                                         prose_languages)
    assert len(ORDINARY) >= 2000


def test_figures_found_missed_and_false_positives():
    missed = [row for row in SECRETS if leaked(redact(row.text)[0], row)]
    flagged = [line for line in ORDINARY if redact(line)[1]]
    print(f"\nstructural corpus: {len(SECRETS)} secrets of {len({r.kind for r in SECRETS})} kinds "
          f"({', '.join(f'{c.value} {n}' for c, n in Counter(r.cls for r in SECRETS).items())}); "
          f"found {len(SECRETS) - len(missed)}, missed {len(missed)} ({', '.join(sorted({r.kind for r in missed}))})")
    print(f"false positives: {len(flagged)} of {len(ORDINARY)} ordinary lines ({len(flagged) / len(ORDINARY):.2%})")
    for line in flagged[:10]:
        print("   ", redact(line)[0][:140])
    assert missed == []
    assert len(flagged) / len(ORDINARY) <= MAX_FALSE_POSITIVES


@pytest.mark.parametrize("row", SECRETS, ids=[f"{r.kind}-{i}" for i, r in enumerate(SECRETS)])
def test_each_secret_is_redacted(row: Secret):
    text, count = redact(row.text)
    assert count >= 1 and not leaked(text, row), text


def test_the_column_form_redacts_the_same():
    texts = [row.text for row in SECRETS] + ORDINARY
    column, count = redact_column(pl.Series(texts))
    singles = [redact(t) for t in texts]
    assert column.to_list() == [text for text, _ in singles]
    assert count == sum(n for _, n in singles)


def test_a_malformed_corpus_file_fails_loudly(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[kind]]\nclass = "poetry"\nkind = "sonnet"\ntemplates = ["{pw}"]\n')
    with pytest.raises(ValueError, match="sonnet"):
        secrets(bad)
    bad.write_text('[[kind]]\nclass = "cli"\nkind = "typo"\ntemplates = ["mysql -p{pww}"]\n')
    with pytest.raises(ValueError, match="typo"):
        secrets(bad)


# ---------------------------------------------------------------- end to end

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
PER_SESSION = 6


def _say(session: ClaudeSession | CodexSession, row: Secret, first: bool) -> None:
    """`row` as its class arrives: a request to remember it, a command an agent ran, or two messages."""
    if row.via is Via.TOOL:
        session.user("run the usual maintenance command")
        if isinstance(session, ClaudeSession):
            session.tool_use("Bash", {"command": row.text, "description": "maintenance"})
        else:
            session.shell(row.text, "ok")
        session.assistant("Done.")
    elif row.via is Via.SPLIT:
        head, tail = row.text.split("\n", 1)
        session.user(head if first else f"remember that {head}")
        session.user(tail)
        session.assistant("Noted.")
    else:
        session.user(row.text if first else f"remember that {row.text}")
        session.assistant("Noted.")


def _write_transcripts(home: Path, project: str) -> int:
    """Half the sessions Claude Code's, half Codex's; how many of each kind of agent."""
    claude = home / ".claude" / "projects" / "-work-ledger"
    groups = [SECRETS[i:i + PER_SESSION] for i in range(0, len(SECRETS), PER_SESSION)]
    for n, group in enumerate(groups):
        start = START + timedelta(hours=n)
        sid = f"5b0c1d2e-0000-4000-8000-{n:012d}"
        if n % 2 == 0:
            session: ClaudeSession | CodexSession = ClaudeSession(sid, start, cwd=project)
            path = claude / f"{sid}.jsonl"
        else:
            session = CodexSession(sid, start, cwd=project)
            path = home / ".codex" / "sessions" / start.strftime("%Y/%m/%d") / f"rollout-{sid}.jsonl"
        for i, row in enumerate(group):
            _say(session, row, first=i == 0)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, session.records)
    return len(groups)


@pytest.mark.slow
def test_no_structural_secret_reaches_anything_dream_writes(tmp_path):
    home = tmp_path / "home"
    store = home / ".claude" / "projects" / "-work-ledger" / "memory"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Deploys](project_deploys.md) — how the ledger is deployed\n")
    (store / "project_deploys.md").write_text("---\nname: Deploys\ndescription: how the ledger is deployed\n"
                                              "type: project\n---\nDeploys go through the release branch.\n")
    sessions = _write_transcripts(home, "/work/ledger")
    env = {**__import__("os").environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "",
           "PYTHONPATH": str(Path(__file__).parents[2])}
    imported = {}
    for agent, source in (("claude-code", store.parent), ("codex", home / ".codex" / "sessions")):
        result = dream(env, "import", "--from", agent, "--store", str(store), "--json", str(source))
        assert result.returncode == 0, result.stderr
        imported[agent] = json.loads(result.stdout)
    assert sum(r["sessions_written"] for r in imported.values()) == sessions, imported
    run = dream(env, "run", "--store", str(store), "--force", "--json")
    assert run.returncode == 0, run.stderr
    assert '"status": "proposed"' in run.stdout, run.stdout
    accepted = dream(env, "accept", "--store", str(store), "--json")
    assert accepted.returncode == 0, accepted.stderr
    assert len(list((store / "logs").rglob("*.md"))) == sessions
    assert len(list(store.glob("*.md"))) > 2  # the run remembered things, and accept wrote them

    written = everything_written(store)
    leaks = sorted({f"{row.kind} in {where}" for where, data in written for row in SECRETS
                    for secret in row.secrets if holds(data, secret)})
    print(f"\n{len(SECRETS)} secrets of {len({r.kind for r in SECRETS})} kinds through {sessions} sessions; "
          f"{len(written)} names and files searched; leaks: {len(leaks)}")
    assert leaks == []
