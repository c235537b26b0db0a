"""Output for people (Rich) and for scripts (one JSON object on stdout).

Rich is imported on first use (`_LazyConsole`, and inside `table`): it costs
about 50 ms of start-up, and `dream status` prints only plain lines (`say`).
"""

from __future__ import annotations

import json
import re
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


class _LazyConsole:
    """A Rich `Console` made when first used."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def made(self) -> Console:
        if self._console is None:
            from rich.console import Console  # start-up: see the module docstring

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    def print(self, *objects: Any, **options: Any) -> None:
        """Rich's print; text going to a file or a pipe is not wrapped at 80 columns.

        A report piped to a file keeps each sentence and index line on one
        line; only tables are laid out for a width.
        """
        console = self.made()
        if not console.is_terminal and all(isinstance(o, str) for o in objects):
            options.setdefault("soft_wrap", True)
        console.print(*objects, **options)


out = cast("Console", _LazyConsole(highlight=False))
err = cast("Console", _LazyConsole(stderr=True, highlight=False))


def rich_console(console: Console) -> Console:
    """The Console itself behind `out` or `err`, for Rich objects that take one (a Progress)."""
    return console.made() if isinstance(console, _LazyConsole) else console


def dream_command() -> str:
    """`dream` as the user can type it again: the name on PATH, else the path they ran it by.

    `.venv/bin/dream run` must not hint a bare `dream diff` that the shell
    cannot find; `python -m dream` hints the same interpreter.
    """
    invoked = sys.argv[0] if sys.argv else ""
    name = os.path.basename(invoked)
    if name == "__main__.py":
        return f"{shlex.quote(sys.executable)} -m dream"
    if name != "dream":  # called as a library (tests, a script): the installed name
        return "dream"
    on_path = shutil.which("dream")
    if os.sep not in invoked or (on_path and os.path.samefile(on_path, invoked)):
        return "dream"
    return shlex.quote(invoked)


# Control characters (C0 but tab, DEL, C1): a file name holding ESC [ … would drive the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character written as an escape (``\x1b``): safe to print to a terminal."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def say(text: str) -> None:
    """One plain line on stdout: no markup, no wrapping, no Rich; control characters escaped."""
    sys.stdout.write(f"{visible(text)}\n")


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, ensure_ascii=False) + "\n")


def error_line(message: str) -> None:
    # One line, no markup interpretation: messages quote user paths verbatim.
    sys.stderr.write(f"dream: error: {visible(' '.join(str(message).split()))}\n")


def when(epoch: float | None) -> str:
    if epoch is None:
        return "never"
    return datetime.fromtimestamp(epoch, tz=timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M")


def words(value: str) -> str:
    """A status or reason word for people: `rolled_back` reads `rolled back`, `no_signal` `no signal`."""
    return str(value).replace("_", " ")


def short_paths(paths: list) -> list[str]:
    """Paths as people tell them apart: relative to their common folder when there are several.

    Claude Code's stores all end in `.../<project>/memory`; cutting a long
    path on the right leaves only the part they share, so it is the shared
    beginning that goes.
    """
    texts = [str(p) for p in paths]
    common = common_root(texts)
    if common is None:
        return texts
    return [os.path.relpath(t, common) if t != common else os.path.basename(t) for t in texts]


def project_names(paths: list) -> list[str]:
    """Stores as the overview names them: a Claude Code store by its project, others as `short_paths` does.

    Claude Code keeps a project's memory in `~/.claude/projects/<cwd with / as ->/memory`:
    `-home-me-shop/memory` is the project `~/shop`. A name the folder cannot be read back
    from unambiguously (a `-` in a folder name) is shown as the folder has it, under `~/`
    when it starts with the home folder.
    """
    fallback = short_paths(paths)
    names = [claude_project(p) or short for p, short in zip(paths, fallback)]
    return [name if names.count(name) == 1 else short for name, short in zip(names, fallback)]


def claude_project(path: Any) -> str | None:
    """`~/shop` for `.../-home-me-shop/memory` (home /home/me); None for a store that is not Claude Code's."""
    store = Path(path)
    folder = store.parent.name
    if store.name != "memory" or not folder.startswith("-"):
        return None
    home = os.path.expanduser("~")
    decoded = "/" + folder[1:].replace("-", "/")
    if os.path.isdir(decoded):
        return "~" + decoded[len(home):] if decoded.startswith(home.rstrip("/") + "/") else decoded
    home_folder = home.replace("/", "-").replace(".", "-")
    if folder.startswith(home_folder + "-"):  # a home folder with a `-` in its own path: decode below it
        rest = folder[len(home_folder) + 1:]
        return "~/" + (rest.replace("-", "/") if os.path.isdir(os.path.join(home, *rest.split("-"))) else rest)
    return folder[1:]


def common_root(paths: list) -> str | None:
    """The folder `short_paths` made the paths relative to, if it did."""
    texts = [str(p) for p in paths]
    if len(texts) < 2:
        return None
    common = os.path.commonpath(texts)
    return None if common in ("", os.sep) else common


def human(value: Any) -> str:
    """A value as a person reads it: no Python spellings (`None`, `True`, quotes around strings)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(human(v) for v in value)
    return str(value)


# Columns whose cells may wrap inside a table; the others must fit on one line or the table is stacked.
WRAPPING_MIN = 24


def table(title: str, columns: list[str], rows: list[list[Any]], wrap: tuple[str, ...] = (),
          width: int | None = None) -> "RenderableType":
    """A table when it fits the terminal, else one stacked block per row; nothing is ever cut.

    A column header or cell cut to `sta…` tells nobody anything. The table is
    kept when every column gets its header and its longest cell on one line
    (the `wrap` columns may wrap at spaces); otherwise each row is printed as
    `column: value` pairs, wrapped between pairs.
    """
    cells = [[human(v) for v in r] for r in rows]
    used = [i for i in range(len(columns)) if any(r[i] != "" for r in cells)] or list(range(len(columns)))
    columns, cells = [columns[i] for i in used], [[r[i] for i in used] for r in cells]  # no all-blank columns
    width = width or out.width
    if _table_width(columns, cells, wrap) <= width:
        from rich.table import Table  # start-up: see the module docstring
        from rich.text import Text  # start-up: see the module docstring

        t = Table(title=title, title_justify="left")
        for c in columns:
            wraps = c in wrap
            t.add_column(c, no_wrap=not wraps, min_width=len(c), overflow="fold")
        for r in cells:
            # Text, not markup: cells hold paths and comments that may contain "[/…]".
            t.add_row(*[Text(v) for v in r])
        return t
    return _stacked(title, columns, cells, width)


def _table_width(columns: list[str], cells: list[list[str]], wrap: tuple[str, ...]) -> int:
    total = 1  # the left border
    for i, c in enumerate(columns):
        longest = max([len(r[i]) for r in cells] + [len(c)])
        if c in wrap:
            longest = min(longest, max(len(c), WRAPPING_MIN))
        total += longest + 3  # a space either side and the border
    return total


def _stacked(title: str, columns: list[str], cells: list[list[str]], width: int) -> "RenderableType":
    from rich.console import Group  # start-up: see the module docstring
    from rich.text import Text  # start-up: see the module docstring

    lines = [Text(title, style="italic")]
    for r in cells:
        pairs = [f"{c}: {v}" for c, v in zip(columns, r) if v != ""]
        lines += [Text(line, overflow="fold") for line in _pack(pairs, width - 2, first="• ", rest="  ")]
    return Group(*lines)


def _pack(pairs: list[str], width: int, first: str, rest: str) -> list[str]:
    """Pairs side by side, three spaces apart, a new line rather than a pair split in two."""
    lines: list[str] = []
    line = ""
    for pair in pairs:
        if len(pair) > width:  # a long comment or list: its own lines, indented under its label
            lines += [line] if line else []
            lines += textwrap.wrap(pair, width, subsequent_indent="    ", break_on_hyphens=False)
            line = ""
        elif line and len(line) + 3 + len(pair) > width:
            lines.append(line)
            line = pair
        else:
            line = f"{line}   {pair}" if line else pair
    if line:
        lines.append(line)
    return [(first if i == 0 else rest) + text for i, text in enumerate(lines)]


def print_diff(diff: str, console: "Console | None" = None) -> None:
    console = console or out
    if not diff:
        console.print("(no differences)")
        return
    if not console.is_terminal:  # a patch for a file or a pipe: contents as they are, names made safe
        console.file.write("".join(visible(line[:-1]) + "\n" if line.startswith(("--- ", "+++ ")) else line
                                   for line in diff.splitlines(keepends=True)))
        return
    for line in map(visible, diff.splitlines()):
        console.print(line, style=_diff_style(line), markup=False, soft_wrap=True)


def _diff_style(line: str) -> str | None:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return "cyan" if line.startswith("@@") else None


def page_diff(diff: str, console: "Console") -> None:
    """A diff taller than the terminal goes through $PAGER (else `less`), so it does not scroll past the question.

    Only on a terminal, where a person reads it; to a file or a pipe it is
    printed as it is. `PAGER=` (empty) or `PAGER=cat` turns paging off.
    """
    command = pager_command()
    tall = diff.count("\n") > console.height - PAGER_MARGIN_LINES
    if not (command and tall and console.is_terminal and sys.stdin.isatty()):
        print_diff(diff, console)
        return
    with console.capture() as shown:
        print_diff(diff, console)
    console.file.flush()
    # less: -R shows the colours, -F quits at once when it all fits after all, -X leaves it on the screen.
    subprocess.run(command, shell=True, input=shown.get(), text=True,
                   env={**os.environ, "LESS": os.environ.get("LESS", "FRX")})


PAGER_MARGIN_LINES = 6  # the file's heading and the question stay in view below a diff this much shorter


def pager_command() -> str | None:
    """$PAGER as the user set it (a shell command, as git reads it), else `less` when installed."""
    if "PAGER" in os.environ:
        return os.environ["PAGER"].strip() or None
    return "less" if shutil.which("less") else None
