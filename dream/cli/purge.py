"""`dream purge-secret`: take one secret out of every version, proposal, ledger, history line, log and pack."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, out, say
from dream.errors import BadInput


@app.command("purge-secret")
def purge_secret_cmd(
    secret_file: Annotated[Optional[Path], typer.Option(
        "--secret-file", help="Read the secret from the first line of this file (default: standard input, "
                              "or a prompt that does not echo). Never an argument: it would stay in the shell's history.",
    )] = None,
    store: StoreOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Purge one secret from every version, proposal, removal ledger, history line, log and pack of a store.

    Each occurrence becomes [REDACTED:purged]; objects holding it are stored again under their new hash and
    deleted; a purged version says so, and rolling back to it gives the redacted bytes.
    """
    from dream.versions.purge import purge_secret  # start-up: see dream/cli/__init__.py

    result = purge_secret(store, _read_secret(secret_file))
    if as_json:
        emit_json(result.to_json())
        return
    if not result.touched() and not result.not_purged and not result.changing:
        say("the secret is not in this store: nothing changed")
        return
    out.print(f"purged from version(s) {', '.join(map(str, result.versions)) or 'none'}; "
              f"proposal(s) {', '.join(result.proposals) or 'none'}")
    out.print(f"{result.objects_replaced} stored object(s) replaced, {result.objects_rewhole} stored whole again, "
              f"{result.packs_rewritten} pack(s) rewritten")
    for name in result.files:
        out.print(f"rewrote {name}")
    for name in result.renamed:
        out.print(f"renamed {name}")
    for name in result.not_purged:
        out.print(f"NOT purged (not a text file; delete or rebuild it): {name}")
    for name in result.changing:
        out.print(f"NOT purged (another program kept changing it; run purge-secret again): {name}")


def _read_secret(path: Path | None) -> str:
    if path is not None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"{path}: cannot read the secret: {getattr(exc, 'strerror', None) or exc}") from None
        return lines[0] if lines else ""
    if sys.stdin.isatty():
        return getpass.getpass("secret to purge (not echoed): ")
    return sys.stdin.readline().rstrip("\r\n")
