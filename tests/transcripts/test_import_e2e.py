"""End to end on a fake home: Claude Code and Codex transcripts → logs → a dream → a proposal.

Every step goes through the real `dream` command in a child process, with
HOME pointing at a folder laid out like a real machine:

    home/.claude/projects/-work-ledger/
        <session-id>.jsonl ...        Claude Code's transcripts
        memory/                       the store (MEMORY.md, topic files)
            .dream/config.toml        transcripts = "claude-code"
    home/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dream.transcripts.synthetic import ClaudeSession, CodexSession, write_jsonl
from helpers.stores import everything_in

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
PROJECT = "-work-ledger"

# Planted secrets: each one is somewhere a careless import would copy it from.
SECRETS = {
    "anthropic": "sk-ant-api03-" + "Qe7vT" * 9,  # in a remember request (would become a memory)
    "github": "ghp_" + "R2d2C3po" * 5,  # in a tool call's arguments
    "aws": "AKIA" + "QWERTYUIOPASDFGH",  # in a tool output (never copied anyway)
    "slack": "xoxb-" + "1234567890-abcdefghijklmnop",  # in the assistant's reply
    "bearer": "eyJhbGciOi" + "J9x8c7v6b5n4m3" * 3,  # behind "Bearer", in thinking and in a remember request
    "grown": "ghp_" + "GrownSecret9" * 4,  # only in the lines a session gains later
}
CODEX_REASONING = "gAAAAB-encrypted-reasoning-" + "z9" * 40

REQUESTS = [  # (first request → log slug, a remember/forget request later in the session)
    ("set up the ledger export", "remember that invoices are exported as CSV every Monday at 06:00 UTC"),
    ("fix the flaky settlement test", "please remember that the settlement tests need TZ=UTC to pass"),
    ("rotate the api key", f"remember that the staging API key is {SECRETS['anthropic']} until Friday"),
    ("move ci off jenkins", "forget about the Jenkins deploy job. We use GitHub Actions now."),
    ("speed up the reports", "keep in mind that the reports service caches for 15 minutes"),
    ("debug the webhook", f"remember that the webhook signs requests with Bearer {SECRETS['bearer']}"),
]


def session_id(i: int) -> str:
    return f"5b0c1d2e-0000-4000-8000-00000000000{i}"


def claude_session(i: int) -> ClaudeSession:
    first, request = REQUESTS[i]
    session = ClaudeSession(session_id(i), START + timedelta(days=i, hours=i))
    session.user(first)
    session.assistant("Looking at the repository first.", thinking=f"maybe Bearer {SECRETS['bearer']}")
    tool = session.tool_use("Bash", {"command": f"GITHUB_TOKEN={SECRETS['github']} gh run list",
                                     "description": "list CI runs"})
    session.tool_result(tool, f"AWS_ACCESS_KEY_ID={SECRETS['aws']}\nrun 42 passed\n")
    session.assistant(f"CI is green. The bot token in .env is {SECRETS['slack']}, rotate it.")
    session.user(request)
    session.assistant("Noted.")
    return session


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(home: Path) -> Path:
    """The project folder: six sessions' transcripts beside a memory store."""
    folder = home / ".claude" / "projects" / PROJECT
    store = folder / "memory"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text(
        "- [Deploys](project_deploys.md) — how the ledger is deployed\n"
        "- [Jenkins deploy job](project_jenkins.md) — the nightly Jenkins deploy job\n"
        "- [Code style](feedback_style.md) — black, ruff, type hints everywhere\n"
    )
    (store / "project_deploys.md").write_text(
        "---\nname: Deploys\ndescription: how the ledger is deployed\ntype: project\n---\n"
        "Deploys go through the release branch and need one approval.\n")
    (store / "project_jenkins.md").write_text(
        "---\nname: Jenkins deploy job\ndescription: the nightly Jenkins deploy job\ntype: project\n---\n"
        "The Jenkins deploy job runs nightly at 02:00 and deploys main to staging.\n")
    (store / "feedback_style.md").write_text(
        "---\nname: Code style\ndescription: black, ruff, type hints everywhere\ntype: feedback\n---\n"
        "Format with black, lint with ruff, type hints on every function.\n")
    (store / ".dream" / "config.toml").write_text('transcripts = "claude-code"\n')
    for i in range(len(REQUESTS)):
        write_jsonl(folder / f"{session_id(i)}.jsonl", claude_session(i).records)
    return folder


def env_for(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "COLUMNS": "200"}


def files_with_stat(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root`: bytes and mtime (the import's lock file is empty and left out)."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file() and p.name != "import.lock"
    }


def log_of(store: Path, sid: str) -> Path:
    (found,) = (store / "logs").rglob(f"{sid}-*.md")
    return found


def everything_written(store: Path) -> list[tuple[str, bytes]]:
    return everything_in(store)


def assert_no_secret(store: Path) -> None:
    for where, data in everything_written(store):
        for kind, secret in SECRETS.items():
            core = secret[len(secret) // 3 : len(secret) // 3 + 12]  # also no fragment of it
            assert secret.encode() not in data and core.encode() not in data, f"{kind} secret in {where}"


def test_run_imports_gates_dreams_and_proposes_then_import_is_incremental(project: Path, home: Path, cli) -> None:
    store = project / "memory"
    env = env_for(home)
    memory_before = {n: (store / n).read_bytes() for n in ("MEMORY.md", "project_jenkins.md", "project_deploys.md")}

    # Before the run there are no logs, so the gate would stay closed without the import.
    assert not (store / "logs").exists()
    run = cli("run", "--store", str(store), "--json", env=env)

    assert run.code == 0, run.stderr
    outcome = run.json
    assert outcome["status"] == "proposed", outcome
    assert outcome["engine"] == "offline" and outcome["sessions_read"] == len(REQUESTS)
    for i, (first, _) in enumerate(REQUESTS):  # one log per session, on the session's own date
        log = log_of(store, session_id(i))
        assert log.parent.relative_to(store / "logs").as_posix() == (START + timedelta(days=i)).strftime("%Y/%m/%d")
        assert first.split()[0] in log.name
    # the store's memory files are untouched until someone accepts
    assert {n: (store / n).read_bytes() for n in memory_before} == memory_before

    diff = cli("diff", outcome["proposal_id"], "--store", str(store), "--json", env=env).json
    text = diff["diff"]
    assert "CSV every Monday at 06:00 UTC" in text and "TZ=UTC" in text  # remembered
    assert "-- [Jenkins deploy job](project_jenkins.md)" in text  # forgotten
    assert "[REDACTED:anthropic-key]" not in text  # a memory of the key alone is no memory: a person is told
    notes = [n["text"] for n in cli("notes", "--store", str(store), "--json", env=env).json["shown"]]
    assert any("staging API key is [REDACTED:anthropic-key]" in n and "was not stored" in n for n in notes)
    assert any(where == ".dream/history.jsonl" for where, _ in everything_written(store))  # the history is searched too
    assert_no_secret(store)

    # A session grows: only its log is rewritten.
    grown_id = session_id(2)
    before = files_with_stat(store)
    more = claude_session(2)
    more.records.clear()
    more.clock = START + timedelta(days=2, hours=5)
    more.user(f"also remember that the deploy bot uses {SECRETS['grown']}")
    more.assistant("Will do.")
    write_jsonl(project / f"{grown_id}.jsonl", more.records, append=True)

    imported = cli("import", "--store", str(store), "--from", "claude-code", "--json", env=env)

    assert imported.code == 0, imported.stderr
    counts = imported.json
    assert counts["sessions_written"] == 1 and counts["sessions_unchanged"] == len(REQUESTS) - 1
    assert counts["redactions"] >= 1 and counts["warnings"] == []
    grown_log = str(log_of(store, grown_id).relative_to(store))
    assert counts["logs_written"] == [grown_log]
    after = files_with_stat(store)
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    assert changed == {grown_log, ".dream/import-state.json"}
    assert "[REDACTED:github-token]" in (store / grown_log).read_text()

    # Importing again changes nothing at all.
    again = cli("import", "--store", str(store), "--from", "claude-code", "--json", env=env).json
    assert again["sessions_written"] == 0 and again["sessions_unchanged"] == len(REQUESTS)
    assert files_with_stat(store) == after

    # A forced second dream reads the grown session, and again the sessions of the first
    # proposal, which nobody reviewed (the new one carries them); still no secret anywhere.
    second = cli("run", "--store", str(store), "--force", "--json", env=env)
    assert second.code == 0, second.stderr
    assert second.json["status"] in ("proposed", "noop") and second.json["sessions_read"] == len(REQUESTS)
    assert_no_secret(store)


CODEX_PROJECT = "/work/ledger"


def codex_rollout(home: Path, day: int, sid: str, cwd: str = CODEX_PROJECT) -> Path:
    start = START + timedelta(days=day)
    session = CodexSession(sid, start, cwd=cwd)
    session.user(f"port the exporter to rust, part {day}")
    session.reasoning(CODEX_REASONING)
    session.shell(f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' localhost", "ok")
    session.patch(["src/export.rs"])
    session.assistant(f"Done; the token {SECRETS['github']} was in the script, I removed it.")
    stamp = start.strftime("%Y-%m-%dT%H-%M-%S")
    path = home / ".codex" / "sessions" / start.strftime("%Y/%m/%d") / f"rollout-{stamp}-{sid}.jsonl"
    write_jsonl(path, session.records)
    return path


def test_import_from_codex_default_location_and_explicit_path(home: Path, tmp_path: Path, cli) -> None:
    store = tmp_path / "store"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Stack](stack.md) — rust and python\n")
    (store / ".dream" / "config.toml").write_text(f'project = "{CODEX_PROJECT}"\n')
    sids = [f"0199a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5{i}" for i in range(3)]
    rollouts = [codex_rollout(home, i, sid) for i, sid in enumerate(sids)]
    # One torn line and one record of a kind this version does not know: both skipped and counted.
    with rollouts[1].open("a") as fh:
        fh.write('{"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payl\n')
        fh.write('{"timestamp": "2026-01-01T00:00:00Z", "type": "future_kind", "payload": {}}\n')

    first = cli("import", "--store", str(store), "--from", "codex", "--json", env=env_for(home))

    assert first.code == 0, first.stderr
    assert first.json["sessions_written"] == 3 and first.json["records_skipped"] == 2
    assert Path(first.json["transcripts"]) == home / ".codex" / "sessions"
    for sid in sids:
        log = log_of(store, sid).read_text()
        assert "> port the exporter to rust" in log and ". apply_patch" in log
        assert CODEX_REASONING not in log
    assert_no_secret(store)

    # An explicit file: already imported, so nothing to write; people get a short summary.
    again = cli("import", "--store", str(store), "--from", "codex", str(rollouts[0]), env=env_for(home))
    assert again.code == 0, again.stderr
    assert "sessions written   0" in again.stdout and "sessions unchanged 1" in again.stdout


@pytest.mark.parametrize("args, names", [
    (["--from", "cursor"], "--from cursor: unknown transcript source"),
    (["--from", "codex", "does/not/exist"], "does/not/exist"),
    (["--from", "claude-code"], "not a Claude Code memory folder"),  # no PATH, and not under ~/.claude
])
def test_bad_import_input_is_one_line_and_exit_2(args: list[str], names: str, home: Path, tmp_path: Path, cli) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "MEMORY.md").write_text("- [Stack](stack.md) — rust\n")
    before = files_with_stat(store)

    result = cli("import", "--store", str(store), *args, env=env_for(home), cwd=tmp_path)

    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("dream: error: ") and result.stderr.count("\n") == 1
    assert names in result.stderr and "Traceback" not in result.stderr
    assert files_with_stat(store) == before and not (store / ".dream").exists()


def test_import_into_a_missing_store_is_bad_input(home: Path, tmp_path: Path, cli) -> None:
    result = cli("import", "--store", str(tmp_path / "nowhere"), "--from", "codex", env=env_for(home))
    assert result.code == 2 and "nowhere" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "nowhere").exists()


def test_codex_import_takes_only_the_sessions_of_the_stores_project(home: Path, tmp_path: Path, cli) -> None:
    """~/.codex/sessions holds every project's sessions; a store takes those whose cwd is its project."""
    store = tmp_path / "store"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Stack](stack.md) — rust\n")
    config = store / ".dream" / "config.toml"
    config.write_text(f'project = "{CODEX_PROJECT}"\n')
    codex_rollout(home, 0, "0199a1b2-0000-4e5f-8a9b-000000000001")
    codex_rollout(home, 1, "0199a1b2-0000-4e5f-8a9b-000000000002", cwd=f"{CODEX_PROJECT}/crates/export")
    codex_rollout(home, 2, "0199a1b2-0000-4e5f-8a9b-000000000003", cwd="/work/website")
    codex_rollout(home, 3, "0199a1b2-0000-4e5f-8a9b-000000000004", cwd="/work/ledger-old")  # a prefix, not below

    first = cli("import", "--store", str(store), "--from", "codex", "--json", env=env_for(home))
    assert first.code == 0, first.stderr
    assert (first.json["sessions_written"], first.json["sessions_other_projects"]) == (2, 2)
    assert sorted(p.name for p in (store / "logs").rglob("*.md")) == sorted(
        p.name for p in (log_of(store, sid) for sid in ("0199a1b2-0000-4e5f-8a9b-000000000001",
                                                        "0199a1b2-0000-4e5f-8a9b-000000000002")))
    again = cli("import", "--store", str(store), "--from", "codex", "--json", env=env_for(home))
    assert (again.json["sessions_written"], again.json["sessions_unchanged"]) == (0, 2)

    config.write_text('project = "/work/website"\n')  # the store names another project: its sessions come in
    moved = cli("import", "--store", str(store), "--from", "codex", "--json", env=env_for(home))
    assert (moved.json["sessions_written"], moved.json["sessions_other_projects"]) == (1, 3), moved.json
    assert len(list((store / "logs").rglob("*.md"))) == 3  # the first project's logs are left as they were


def test_codex_import_with_no_path_and_no_project_is_refused_saying_what_to_set(home: Path, tmp_path: Path,
                                                                               cli) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "MEMORY.md").write_text("- [Stack](stack.md) — rust\n")
    codex_rollout(home, 0, "0199a1b2-0000-4e5f-8a9b-000000000001")

    result = cli("import", "--store", str(store), "--from", "codex", env=env_for(home))
    assert result.code == 2 and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert "holds the sessions of every project" in result.stderr and 'project = "PATH"' in result.stderr
    assert not (store / "logs").exists()
