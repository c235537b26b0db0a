"""What the instruction files already say (issue 40, item 4), through `dream run`, `diff`, `notes`, `accept`.

A store whose project has a CLAUDE.md and whose user has a ~/.claude/CLAUDE.md: a memory that only
repeats a CLAUDE.md line goes with the file and line as evidence, a memory that says more stays, a
remember of an instruction files nothing and says so, and a disagreement reaches a person with both lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.fake_anthropic import Reply, fake_api, memory, tool_use  # noqa: F401

CLAUDE_MD = ("# Conventions\n\n- Use pnpm for installs, never npm.\n- The staging database listens on port 5432.\n"
             "- Commit messages are written in English.\n- Run `pnpm test` before every push.\n")
MEMORY = ("# Memory\n\n- [Package manager](feedback_pnpm.md) — pnpm, not npm\n"
          "- [Staging DB](project_staging.md) — staging port\n- [Tests](feedback_tests.md) — before push\n"
          "- Commit messages are written in English\n")


def topic(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: feedback\n---\n\n{body}"


def a_store(root: Path) -> Path:
    """The memory folder, its project (with CLAUDE.md) and a home (with ~/.claude/CLAUDE.md), side by side."""
    project, home, store = root / "project", root / "home", root / "memory"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("- Answer in English.\n")
    project.mkdir()
    (project / "CLAUDE.md").write_text(CLAUDE_MD)
    (store / ".dream").mkdir(parents=True)
    (store / ".dream" / "config.toml").write_text(f'project = "{project}"\ninstructions_home = "{home}"\n')
    (store / "MEMORY.md").write_text(MEMORY)
    (store / "feedback_pnpm.md").write_text(topic("pnpm, never npm", "use pnpm for installs, never npm",
                                                  "Use pnpm for installs, never npm.\n"))
    (store / "project_staging.md").write_text(topic("Staging DB", "staging database port",
                                                    "The staging database listens on port 5433.\n"))
    (store / "feedback_tests.md").write_text(topic("Tests", "run pnpm test before every push",
                                                   "Run `pnpm test` before every push.\n\n**Why:** the 2026-10-02 "
                                                   "release broke when the e2e suite was skipped.\n"))
    logs = store / "logs" / "2026" / "11" / "20"
    logs.mkdir(parents=True)
    (logs / "s1-talk.md").write_text("> remember: answer in English\n< ok\n")
    return store


def test_a_store_beside_claude_md_drops_repeats_files_nothing_said_and_asks_about_disagreements(cli, tmp_path):
    store = a_store(tmp_path)
    before = {p.name: p.read_bytes() for p in store.glob("*.md")}

    run = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert run.code == 0 and run.json["status"] == "proposed", run.stderr
    diff = cli("diff", "--store", str(store), "--json").json
    notes = [n["text"] for n in cli("notes", "--store", str(store), "--json").json["shown"]]

    removed = {c["path"]: c for c in diff["changes"]}
    assert removed["feedback_pnpm.md"]["action"] == "deleted" and removed["feedback_pnpm.md"]["kind"] == "housekeeping"
    assert "CLAUDE.md line 3" in removed["feedback_pnpm.md"]["reason"]
    assert "Use pnpm for installs, never npm." in removed["feedback_pnpm.md"]["detail"]
    assert "CLAUDE.md line 5" in removed["MEMORY.md"]["reason"]  # the inline rule
    assert set(removed) == {"feedback_pnpm.md", "MEMORY.md"}  # the staging and tests memories stay
    assert not any(c["action"] == "created" for c in diff["changes"])  # the remember filed nothing

    [said, disagreement, more] = sorted(notes, key=lambda n: ("asks to remember" not in n, "port" not in n))
    assert "~/.claude/CLAUDE.md line 1" in said and "nothing filed" in said
    assert "port 5433" in disagreement and "port 5432" in disagreement and "CLAUDE.md line 4" in disagreement
    assert "feedback_tests.md" in more and "repeats CLAUDE.md line 6" in more

    accepted = cli("accept", "--store", str(store))
    assert accepted.code == 0, accepted.stderr
    assert not (store / "feedback_pnpm.md").exists()
    assert (store / "MEMORY.md").read_text() == MEMORY.replace(
        "- [Package manager](feedback_pnpm.md) — pnpm, not npm\n", "").replace(
        "- Commit messages are written in English\n", "")
    for kept in ("project_staging.md", "feedback_tests.md"):
        assert (store / kept).read_bytes() == before[kept]
    assert (tmp_path / "project" / "CLAUDE.md").read_text() == CLAUDE_MD  # read, never written


def test_the_project_is_found_from_the_claude_code_transcripts_cwd(cli, home):
    """A Claude Code memory folder names no project: the instruction files are found from where its sessions ran."""
    project = home / "src" / "shop"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text(CLAUDE_MD)
    folder = home / ".claude" / "projects" / "-src-shop"
    store = folder / "memory"
    store.mkdir(parents=True)
    (store / "MEMORY.md").write_text("# Memory\n\n- [Package manager](feedback_pnpm.md) — pnpm, not npm\n")
    (store / "feedback_pnpm.md").write_text(topic("pnpm, never npm", "use pnpm for installs, never npm",
                                                  "Use pnpm for installs, never npm.\n"))
    record = {"type": "user", "cwd": str(project), "sessionId": "abc", "timestamp": "2026-11-20T10:00:00Z",
              "uuid": "u1", "message": {"role": "user", "content": "what does the build do?"}}
    (folder / "abc.jsonl").write_text(json.dumps(record) + "\n")

    run = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert run.code == 0 and run.json["status"] == "proposed", run.stderr
    [change] = [c for c in cli("diff", "--store", str(store), "--json").json["changes"] if c["action"] == "deleted"]
    assert change["path"] == "feedback_pnpm.md" and "CLAUDE.md line 3" in change["reason"]


def test_the_claude_engine_reads_the_instruction_lines_in_its_first_message(cli, tmp_path, fake_api):
    store = a_store(tmp_path)
    fake_api.play(Reply([memory("view", path="/memories")]), Reply([tool_use("finish", summary="Nothing to change.")]))

    run = cli("run", "--store", str(store), "--engine", "claude", "--force", "--json")
    assert run.code == 0, run.json.get("error")
    first = fake_api.requests[0]["messages"][0]["content"][0]["text"]
    section = first[first.index("## What the instruction files already say"):]
    assert "(~/.claude/CLAUDE.md, CLAUDE.md)" in section
    assert "  1: Answer in English." in section and "  4: The staging database listens on port 5432." in section
    assert "Conventions" not in section  # a heading is no statement
