"""Two ways to drive the `dream` command: in this process, or as a child process.

`in_process` is the default behind the `cli` fixture: it calls
`dream.cli.main`, the console script's own entry point, with its arguments,
environment, working folder and standard streams set for the call, so the
error handling, the exit codes and the output are the ones a user gets. A
child process costs 0.7-1 s of interpreter and import start-up per call;
this costs milliseconds.

`spawn` runs the installed console script in a child process. Tests keep
it for what only a process shows: being killed at a crash point, several
processes racing for one lock, a real terminal, and the interpreter's own
output (a traceback at import, a warning at exit) that `main` never sees.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# What a child process started by `spawn` sees as its terminal width (its
# stdout is a pipe): Rich falls back to 80 columns. A test that needs
# wider tables sets COLUMNS itself.
COLUMNS = "80"


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


def assert_one_line_error(res: Result, code: int, *needles: str) -> None:
    """What every bad input must give: exit `code`, one line on stderr naming each of `needles`, no traceback."""
    assert res.code == code, (res.code, res.stdout[-2000:], res.stderr[-2000:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]


def in_process(*args: str, env: dict | None = None, cwd: Path | None = None, input: str | None = None) -> Result:
    """`dream *args` through `dream.cli.main` in this process; `env` overrides os.environ for the call only.

    `input` is what the command reads on stdin (not a terminal).
    """
    from typer.testing import CliRunner

    from dream.cli import main

    if "DREAM_CRASHPOINT" in (env or {}) or os.environ.get("DREAM_CRASHPOINT"):
        # The crash point SIGKILLs the process that reaches it: here, the test run.
        raise RuntimeError("a command with DREAM_CRASHPOINT set must run in a child process (spawned_cli)")
    runner = CliRunner()
    isolated = runner.isolation(input=input, env={"COLUMNS": COLUMNS, **(env or {})})
    with isolated as (stdout, stderr, _), _working_folder(cwd):
        _consoles_as_in_a_new_process()
        try:
            main(list(args))
            code = 0  # not reached: main always ends with SystemExit, as the console script does
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = stdout.getvalue(), stderr.getvalue()
    return Result(code, out.decode(), err.decode())


def terminal_env() -> dict[str, str]:
    """os.environ for a child given a pty: without COLUMNS and LINES (pytest-xdist workers start with
    80x24 in theirs), so that the child's Rich reads the pty's own size, as in a real terminal."""
    return {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}


def console_script() -> list[str]:
    """The installed `dream` command beside this interpreter, or `python -m dream` where there is none."""
    script = Path(sys.executable).with_name("dream")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dream"]


def spawn(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> Result:
    """Run the installed `dream` command in a child process, the way a user does."""
    proc = subprocess.run(
        [*console_script(), *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@contextlib.contextmanager
def _working_folder(cwd: Path | None):
    if cwd is None:
        yield
        return
    with contextlib.chdir(cwd):
        yield


def _consoles_as_in_a_new_process() -> None:
    # dream's Rich consoles read COLUMNS, LINES and whether stdout is a
    # terminal when they are first used: in this process perhaps in an
    # earlier call, with that call's environment (pytest-xdist workers even
    # start with COLUMNS=80 LINES=24 in theirs). A child process makes them
    # anew with the call's environment, and so do we: the next use, inside
    # the runner's isolation, makes them again (stdout is then not a terminal: no colours).
    from dream.cli import console
    from dream.versions import proposals

    for c in (console.out, console.err):
        c._console = None  # type: ignore[attr-defined]
    proposals._warned.clear()  # a damaged proposal is named once per process: once per command


def dismiss_open_notes(store, cli) -> None:
    """Dismiss every open note for a person: `dream review` asks about a note's suggestion before the files,
    and a test of the files' questions answers only those (tests/cli/test_notes.py answers the notes)."""
    for note in cli("notes", "--store", str(store), "--json").json["shown"]:
        assert cli("notes", "dismiss", str(note["id"]), "--store", str(store)).code == 0
