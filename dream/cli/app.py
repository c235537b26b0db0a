"""The `dream` command: a thin layer over the library.

Every command takes `--store` and `--json`. With `--json`, stdout carries one
JSON object and nothing else. Exit codes: 0 success, skip or noop; 1 a failed
run or a refused operation; 2 bad usage or bad input (one line on stderr).
Commands live in modules beside this one, grouped by concern.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

from dream import __version__
from dream.address_space import fit_allocator_to_cap, out_of_memory
from dream.cli.console import error_line
from dream.errors import DreamError, StoreNotFound, from_os_error
from dream.store.layout import plainly_a_store

app = typer.Typer(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
    help="Consolidate an AI agent's markdown memory offline, as a reviewable proposal.",
)


def _print_version(asked: bool) -> None:
    if asked:
        sys.stdout.write(f"dream {__version__}\n")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print dream's version and exit.")] = False) -> None:
    """Consolidate an AI agent's markdown memory offline, as a reviewable proposal."""


def store_named(ctx: typer.Context, param: typer.CallbackParam, value: Path) -> Path:
    """The store is what the user says it is: `--store`, `$DREAM_STORE`, or a current folder that is plainly one.

    Without either, the current folder is taken only when it holds
    ``MEMORY.md`` or ``.dream/``: typed in a project checkout or a home
    folder, a command must not make it a store (a run would leave ``.dream/``
    there and index its README). `--all` and `--root` need no store.
    """
    source = ctx.get_parameter_source(param.name or "store")
    if source is None or source.name != "DEFAULT":  # named on the command line or in $DREAM_STORE
        return value
    if plainly_a_store(Path.cwd()) or ctx.params.get("all_stores") or ctx.params.get("roots"):
        return value
    raise StoreNotFound(f"{Path.cwd()}: no store named, and this folder holds no MEMORY.md or .dream/; "
                        f"pass --store PATH or set DREAM_STORE")


StoreOpt = Annotated[Path, typer.Option("--store", "-s", envvar="DREAM_STORE", callback=store_named, help=(
    "Memory store folder (default: the current folder, if it holds MEMORY.md or .dream/)."))]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object for scripts.")]
CommentOpt = Annotated[Optional[str], typer.Option("--comment", "-m", help="Why, for the audit trail.")]
# Many stores at once (run, status, history): what `--all` covers, and more folders to look in.
AllOpt = Annotated[bool, typer.Option(
    "--all", help="Every store under ~/.claude/projects (and --root folders); --store is not needed.")]
RootOpt = Annotated[Optional[list[Path]], typer.Option(
    "--root", help="Also look for stores under this folder (implies --all; repeatable).")]


def main(argv: list[str] | None = None) -> int:
    """Entry point: turns every error into one line on stderr and an exit code."""
    fit_allocator_to_cap()  # before any thread starts: under `ulimit -v`, arenas would eat the cap
    args = file_lists(sys.argv[1:] if argv is None else list(argv))
    command = _group_for(args)
    try:
        code = command.main(args=args, prog_name="dream", standalone_mode=False)
    except typer.Abort:
        error_line("aborted")
        return _exit(130)
    except typer.TyperException as exc:  # click's usage errors, vendored by Typer
        if type(exc).__name__ == "NoArgsIsHelpError":
            ctx = getattr(exc, "ctx", None)  # a click UsageError; TyperException does not declare ctx
            if ctx:
                sys.stdout.write(ctx.get_help() + "\n")
            return _exit(0)
        error_line(exc.format_message() if hasattr(exc, "format_message") else str(exc))
        return _exit(getattr(exc, "exit_code", 2) or 2)
    except DreamError as exc:
        error_line(str(exc))
        return _exit(exc.exit_code)
    except KeyboardInterrupt:
        error_line("interrupted")
        return _exit(130)
    except MemoryError:  # Python's own allocations: polars' abort the process and cannot be caught
        error_line(out_of_memory())
        return _exit(2)
    except OSError as exc:
        known = from_os_error(exc)  # no space, no permission: the user's to fix, not a bug
        if known is None:
            return _internal_error(exc)
        error_line(str(known))
        return _exit(known.exit_code)
    except Exception as exc:  # a bug: still one line, the traceback only on request
        return _internal_error(exc)
    return _exit(code if isinstance(code, int) else 0)


def _group_for(args: list[str]) -> TyperGroup:
    """The command group (its commands registered by dream.cli), holding only the command named first when one
    is: typer builds each command's parameters from its signature, 0.027 s for all 25, on every start-up.
    `dream --help`, a group option and a name that is no command get the whole group. A group, as `get_command`
    makes of an app with a callback and without completion."""
    named = [info for info in app.registered_commands if args and _name(info) == args[0]]
    if not named:
        return typer.main.get_group(app)
    every = app.registered_commands
    app.registered_commands = named
    try:
        return typer.main.get_group(app)
    finally:
        app.registered_commands = every


def _name(info: typer.models.CommandInfo) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__ if info.callback else "")


def _internal_error(exc: BaseException) -> int:
    if os.environ.get("DREAM_DEBUG"):
            traceback.print_exc()
    error_line(f"internal error: {type(exc).__name__}: {exc} (set DREAM_DEBUG=1 for a traceback)")
    return _exit(1)


# Options that name memory files and take several after one flag: `--only a.md b.md`.
FILE_LIST_OPTIONS = ("--only", "--except")


def file_lists(args: list[str]) -> list[str]:
    """`--only a.md b.md` as click reads it: `--only a.md --only b.md`.

    Click options take one value each. A memory file's name always ends in
    `.md` and a proposal id never does, so the names after the first that end
    in `.md` belong to the flag, and anything else (an id, another option)
    ends the list.
    """
    expanded: list[str] = []
    flag: str | None = None
    value_due = False  # the word right after the flag is its value, whatever it looks like
    for index, arg in enumerate(args):
        if arg == "--":
            return expanded + args[index:]
        if value_due:
            expanded.append(arg)
            value_due = False
            continue
        if flag and arg.endswith(".md") and not arg.startswith("-"):
            expanded += [flag, arg]
            continue
        name = arg.split("=", 1)[0]
        flag = name if name in FILE_LIST_OPTIONS else None
        value_due = flag is not None and "=" not in arg
        expanded.append(arg)
    return expanded


def _exit(code: int) -> int:
    sys.stdout.flush()
    raise SystemExit(code)
