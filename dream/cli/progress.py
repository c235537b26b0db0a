"""Progress for people: a Rich progress display on stderr while a run or a fleet run works.

Shown only when stderr is a terminal and `--json` is not given: a cron log,
a pipe or a script sees nothing of it. It is transient, so what stays on
the screen is the command's own output.

- One store (`dream run`): the stage running (the `call` hook of
  `dream.pipeline.run.run`), and while gathering, a bar of the session logs
  read (`on_progress`, in bytes).
- A fleet (`dream run --all`): a bar of the stores done, the lines of each
  store printed above it as they end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from dream.cli.console import err, rich_console
from dream.pipeline.stages import STAGE_NAMES

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def wanted(as_json: bool) -> bool:
    return not as_json and err.is_terminal


class _Display:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def _start(self, description: str, total: float | None) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn  # start-up

        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                            console=rich_console(err), transient=True)
        self.bar.start()
        self.task = self.bar.add_task(description, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


class RunProgress(_Display):
    """`with RunProgress(enabled) as p: pipeline.run(..., call=p.call, on_progress=p.on_progress)`."""

    def __enter__(self) -> "RunProgress":
        if self.enabled:
            self._start("starting", None)
        return self

    def call(self, stage: Callable, *args: Any, **kwargs: Any) -> Any:
        if self.bar is not None and self.task is not None:
            name = STAGE_NAMES.get(stage.__name__, stage.__name__)
            self.bar.update(self.task, description=name, total=None, completed=0)
            self.bar.refresh()  # most stages take less than a refresh period: show each one at least once
        return stage(*args, **kwargs)

    def on_progress(self, done: int, total: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description="gather: reading sessions", total=total, completed=done)


class FleetProgress(_Display):
    """A bar of the stores done; `row_done` advances it."""

    def __init__(self, enabled: bool, stores: int):
        super().__init__(enabled and stores > 0)
        self.stores = stores

    def __enter__(self) -> "FleetProgress":
        if self.enabled:
            self._start("stores done", self.stores)
        return self

    def row_done(self) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)
