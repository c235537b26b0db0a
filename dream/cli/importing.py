"""`dream import`: derive a store's activity logs from an agent's session transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, out
from dream.errors import BadInput

FromOpt = Annotated[str, typer.Option("--from", help="Whose transcripts: claude-code | codex | claude-mem.")]
DbOpt = Annotated[Optional[Path], typer.Option(
    "--db", help="claude-mem's database (default: ~/.claude-mem/claude-mem.db); read only, never written.")]
PathArg = Annotated[Optional[Path], typer.Argument(
    help="A transcript file or folder (default: the agent's own location; for "
         "~/.claude/projects/<p>/memory, the JSONL files beside it).")]

if TYPE_CHECKING:
    from dream.transcripts.importer import ImportResult


@app.command("import")
def import_cmd(
    source: FromOpt,
    path: PathArg = None,
    db: DbOpt = None,
    store: StoreOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Write one activity log per changed session; unchanged sessions are not read."""
    from dream.config import load_settings  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.transcripts.importer import SOURCES, import_transcripts  # start-up: see dream/cli/__init__.py
    from dream.sources import SourceKind  # start-up: see dream/cli/__init__.py
    if source not in SOURCES:  # checked first: the clearest message for a typo
        raise BadInput(f"--from {source}: unknown transcript source (use one of {', '.join(SOURCES)})")
    kind = SourceKind(source)
    if db is not None:
        if kind != SourceKind.CLAUDE_MEM or path is not None:
            raise BadInput(f"--db {db}: only for --from claude-mem, instead of a path")
        path = db
    layout = Layout.open(store)
    settings = load_settings(layout.root)
    result = import_transcripts(layout.root, kind, path, settings)
    if as_json:
        emit_json(result_json(result, layout.root))
    else:
        print_result(result, layout.root)


def result_json(result: ImportResult, root: Path) -> dict:
    """The import's counts, with log paths relative to the store."""
    return {
        "source": result.source,
        "transcripts": str(result.transcripts),
        "sessions_written": result.sessions_written,
        "sessions_unchanged": result.sessions_unchanged,
        "sessions_other_projects": result.sessions_elsewhere,
        "records_skipped": result.records_skipped,
        "redactions": result.redactions,
        "warnings": list(result.warnings),
        "logs_written": [_relative(p, root) for p in result.logs_written],
        "logs_removed": [_relative(p, root) for p in result.logs_removed],
        "cleaned": result.cleaned,
    }


def print_result(result: ImportResult, root: Path) -> None:
    out.print(f"imported {result.source} transcripts from {result.transcripts}", markup=False)
    out.print(f"sessions written   {result.sessions_written}")
    out.print(f"sessions unchanged {result.sessions_unchanged}")
    if result.sessions_elsewhere:
        out.print(f"other projects'    {result.sessions_elsewhere} (not this store's project; left out)", markup=False)
    out.print(f"records skipped    {result.records_skipped}")
    out.print(f"redactions         {result.redactions}")
    if result.cleaned:
        out.print(f"removed            {len(result.cleaned)} temporary file(s) a killed import left", markup=False)
    out.print(f"warnings           {len(result.warnings)}")
    for warning in result.warnings:
        out.print(f"  {warning}", markup=False)
    for removed in result.logs_removed:
        out.print(f"removed renamed log {_relative(removed, root)}", markup=False)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
