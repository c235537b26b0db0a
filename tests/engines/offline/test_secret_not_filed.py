"""A request to remember a secret files nothing: the secret is redacted before the engine reads the line,
and a memory saying "the staging token is [REDACTED:…]" would only say that a token exists. A person is
told, in a note that holds no secret. Driven through `dream run`, `dream notes` and `dream diff`."""

from __future__ import annotations

from pathlib import Path

TOKEN = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
INDEX = "- [CI](reference_ci.md) — GitHub Actions\n"
CI = "---\nname: CI\ndescription: GitHub Actions\ntype: reference\n---\nCI runs on GitHub Actions.\n"


def store_with(root: Path, *said: str) -> Path:
    store = root / "store"
    (store / "logs" / "2026" / "11" / "20").mkdir(parents=True)
    (store / "MEMORY.md").write_text(INDEX)
    (store / "reference_ci.md").write_text(CI)
    lines = "".join(f"> {line}\n< Noted.\n" for line in said)
    (store / "logs" / "2026" / "11" / "20" / "s1.md").write_text(lines)
    return store


def open_notes(cli, store: Path) -> list[str]:
    return [note["text"] for note in cli("notes", "--store", str(store), "--json").json["shown"]]


def test_remembering_only_a_token_files_nothing_and_tells_a_person_without_the_token(tmp_path, cli):
    store = store_with(tmp_path, f"remember that the staging token is {TOKEN}")
    run = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert run.code == 0, run.stderr
    assert run.json["changes"] == 0  # no memory made of a redaction marker
    assert sorted(p.name for p in store.glob("*.md")) == ["MEMORY.md", "reference_ci.md"]
    notes = open_notes(cli, store)
    assert len(notes) == 1 and "a secret was asked to be remembered and was not stored" in notes[0]
    assert "the staging token" in notes[0] and TOKEN not in notes[0] and TOKEN[4:] not in notes[0]


def test_the_fact_beside_the_secret_is_filed_and_the_secret_is_not(tmp_path, cli):
    store = store_with(tmp_path, f"remember the staging token is {TOKEN}",
                       "also remember that staging deploys need the VPN")
    assert cli("run", "--store", str(store), "--engine", "offline", "--force").code == 0
    diff = cli("diff", "--store", str(store))
    assert diff.code == 0
    assert "Staging deploys need the VPN." in diff.stdout
    assert "REDACTED" not in diff.stdout.split("## Needs a person")[0]  # no change quotes the marker
    assert TOKEN not in diff.stdout
    assert any("was not stored" in note for note in open_notes(cli, store))


def test_a_password_inside_a_connection_url_leaves_a_memory_worth_keeping(tmp_path, cli):
    store = store_with(tmp_path, "remember the staging db url is "
                                 "postgres://ledger:Tr0ub4dor3xyz@db-staging.internal:5432/ledger")
    assert cli("run", "--store", str(store), "--engine", "offline", "--force").code == 0
    diff = cli("diff", "--store", str(store))
    assert "db-staging.internal:5432/ledger" in diff.stdout and "Tr0ub4dor3xyz" not in diff.stdout
    assert not any("was not stored" in note for note in open_notes(cli, store))
