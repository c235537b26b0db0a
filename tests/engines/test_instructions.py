"""Which instruction files dream reads, found as Claude Code and Codex find them (dream/engines/instructions.py)."""

from __future__ import annotations

from pathlib import Path

from dream.config import Settings
from dream.engines.instructions import instruction_files, load_instructions, nested_instructions, read_file


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_claude_code_reads_every_folder_up_codex_from_the_git_root_down(tmp_path):
    repo = tmp_path / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    project = repo / "packages" / "api"
    project.mkdir(parents=True)
    home = tmp_path / "home"
    expected = [
        write(home / ".claude" / "CLAUDE.md", "- global claude\n"),
        write(home / ".codex" / "AGENTS.override.md", "- global override\n"),  # wins over AGENTS.md
        write(tmp_path / "work" / "CLAUDE.md", "- above the repo: Claude Code reads it\n"),
        write(repo / "CLAUDE.md", "- repo claude\n"),
        write(project / "CLAUDE.local.md", "- local\n"),
        write(project / ".claude" / "CLAUDE.md", "- dot claude\n"),
        write(repo / "AGENTS.md", "- repo agents\n"),
        write(project / "AGENTS.md", "- api agents\n"),
    ]
    write(home / ".codex" / "AGENTS.md", "- shadowed by the override\n")
    write(tmp_path / "work" / "AGENTS.md", "- above the git root: Codex stops at the root\n")
    write(repo / "packages" / "web" / "CLAUDE.md", "- a sibling: loaded by neither\n")
    write(project / "src" / "CLAUDE.md", "- below: loaded only when Claude reads there\n")
    write(repo / "packages" / "CLAUDE.md", "")  # empty: nothing to read

    assert instruction_files(project, home / ".claude", home / ".codex") == expected


def test_the_environment_moves_the_homes_unless_instructions_home_is_set(tmp_path, monkeypatch):
    moved_claude = write(tmp_path / "cc" / "CLAUDE.md", "- moved claude\n")
    moved_codex = write(tmp_path / "cx" / "AGENTS.md", "- moved codex\n")
    pinned = write(tmp_path / "pinned" / ".claude" / "CLAUDE.md", "- pinned\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved_claude.parent))
    monkeypatch.setenv("CODEX_HOME", str(moved_codex.parent))
    store = tmp_path / "store"
    store.mkdir()

    found = load_instructions(store, Settings(transcripts=None))
    assert [(r.file, r.text) for r in found] == [(str(moved_claude), "moved claude"), (str(moved_codex), "moved codex")]
    pinned_home = Settings(transcripts=None, instructions_home=str(pinned.parent.parent))
    assert [(r.file, r.text) for r in load_instructions(store, pinned_home)] == [("~/.claude/CLAUDE.md", "pinned")]


def test_statements_are_list_items_and_prose_not_headings_code_or_imports(tmp_path):
    path = write(tmp_path / "CLAUDE.md", "# Rules\n\nUse pnpm.\n- Run tests first.\n1. Keep PRs small.\n"
                 "<!-- a comment -->\n@docs/more.md\n```sh\npnpm test\n```\n| a | b |\n> quoted\n"
                 "<!--\n- Use npm (an old rule, commented out)\n-->\n")
    assert [(r.line, r.text, r.where) for r in read_file(path, tmp_path, tmp_path / "home")] == [
        (3, "Use pnpm.", "CLAUDE.md line 3"), (4, "Run tests first.", "CLAUDE.md line 4"),
        (5, "Keep PRs small.", "CLAUDE.md line 5")]


def test_an_indented_example_is_code_and_each_statement_knows_its_heading(tmp_path):
    path = write(tmp_path / "CLAUDE.md", "A bad rule looks like this:\n\n    Always use npm.\n    npm i\n\n"
                 "## Never do this\n- Push directly to main.\n  - continued item\n")
    assert [(r.line, r.text, r.heading) for r in read_file(path, tmp_path, tmp_path / "home")] == [
        (1, "A bad rule looks like this:", ""), (7, "Push directly to main.", "Never do this"),
        (8, "continued item", "Never do this / - Push directly to main.")]


def test_a_statement_stands_under_every_heading_above_it_a_lead_in_and_its_parent_items(tmp_path):
    path = write(tmp_path / "CLAUDE.md", "## Never\n### Git\n- Force-push.\n\n## Style\nDon't do any of this:\n\n"
                 "- Tabs.\n  wrapped text\n- Long lines.\n\nPlain prose.\n- Never:\n  - Edit vendor/.\n"
                 "**Avoid**\n- Mocks.\n")
    assert [(r.text, r.heading) for r in read_file(path, tmp_path, tmp_path / "home")] == [
        ("Force-push.", "Never / Git"), ("Don't do any of this:", "Style"),
        ("Tabs.", "Style / Don't do any of this:"), ("wrapped text", "Style / Don't do any of this:"),
        ("Long lines.", "Style / Don't do any of this:"), ("Plain prose.", "Style"), ("Never:", "Style"),
        ("Edit vendor/.", "Style / - Never:"), ("**Avoid**", "Style"), ("Mocks.", "Style / **Avoid**")]


def test_claude_md_imports_and_theirs_are_loaded_by_claude_code_but_not_from_code_spans(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    write(project / "CLAUDE.md", "@AGENTS.md\nSee @docs/a.md. Not `@docs/code.md`, nor ana@example.com\n")
    write(project / "AGENTS.md", "- Agents line.\n")
    write(project / "docs/a.md", "- A line. @b.md\n")
    write(project / "docs/b.md", "- B line.\n")
    write(project / "docs/code.md", "- Code line.\n")
    found = load_instructions(tmp_path / "store", Settings(transcripts=None, project=str(project),
                                                           instructions_home=str(home)))
    agents = {r.text: sorted(r.agents) for r in found}
    assert agents == {"See @docs/a.md. Not `@docs/code.md`, nor ana@example.com": ["claude-code"],
                      "Agents line.": ["claude-code", "codex"], "A line. @b.md": ["claude-code"],
                      "B line.": ["claude-code"]}
    assert {r.folder for r in found} == {project.as_posix()}  # an import loads where its importer does


def test_subfolder_files_are_nested_ones_not_loaded_ones(tmp_path):
    """packages/web/AGENTS.md loads only while the agent works there: read apart, never among the loaded lines."""
    project, home, store = tmp_path / "project", tmp_path / "home", tmp_path / "memory"
    store.mkdir()
    write(project / "CLAUDE.md", "- top\n")
    write(project / "packages" / "web" / "AGENTS.md", "- web only\n")
    write(project / "node_modules" / "x" / "CLAUDE.md", "- a dependency's own\n")
    write(project / "a" / "b" / "c" / "d" / "CLAUDE.md", "- too deep\n")
    settings = Settings(transcripts=None, project=str(project), instructions_home=str(home))
    assert [r.text for r in load_instructions(store, settings)] == ["top"]
    assert [(r.file, r.text) for r in nested_instructions(store, settings)] == [("packages/web/AGENTS.md", "web only")]


def test_a_codex_folder_finds_its_project_where_its_evidence_says_its_sessions_ran(tmp_path):
    """No `project` setting: the rollout summaries' and raw memories' `cwd:` name the project, as transcripts do."""
    project, home, store = tmp_path / "src" / "shop", tmp_path / "home", tmp_path / "home" / ".codex" / "memories"
    write(project / "AGENTS.md", "- Use pnpm for installs.\n")
    write(store / "memory_summary.md", "v1\n")
    for n in (1, 2):
        write(store / "rollout_summaries" / f"2026-11-2{n}T10-00-00-s{n}.md",
              f"thread_id: t{n}\nupdated_at: 2026-11-2{n}T10:00:00Z\ncwd: {project}\n\n# Session {n}\n")
    write(store / "raw_memories.md", f"# Raw Memories\n\n## Thread `t3`\nupdated_at: 2026-11-23T10:00:00Z\n"
                                     f"cwd: {tmp_path / 'elsewhere'}\n")
    settings = Settings(transcripts=None, instructions_home=str(home))
    assert [(r.file, r.text) for r in load_instructions(store, settings)] == [("AGENTS.md", "Use pnpm for installs.")]
