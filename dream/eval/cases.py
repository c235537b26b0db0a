"""Eval cases: read from YAML files a person can read and write.

One file per category (``duplicates.yaml``, ``forget.yaml`` …)::

    category: forget
    cases:
      - id: forget-by-title
        why: the user names the memory by its title, not its text
        store:                      # the memory files before the dream
          MEMORY.md: |
            - [Slack alerts](project_slack.md) — deploy notices go to #ops
          project_slack.md: |
            ...
        logs:                       # activity logs, one per session
          - date: 2026-11-20
            text: |
              > forget the slack alerts, we retired them
        instructions:               # optional: the instruction files the agent loads with the store
          CLAUDE.md: |              # a path in the project (`CLAUDE.md`, `AGENTS.md`, `CLAUDE.local.md`,
            - Use pnpm, never npm   # `.claude/CLAUDE.md`, `packages/api/AGENTS.md` …) or in the user's
          ~/.codex/AGENTS.md: |     # home (`~/.claude/CLAUDE.md`, `~/.codex/AGENTS.md`); see
            - Answer in English     # dream.eval.runner and docs/eval.md
        steps: [run, accept]        # the default
        known_miss:                 # optional: why an engine misses this case by design; still
          offline: needs the model  # scored as a miss, but `dream eval` does not exit 1 for it
        chatter: false              # optional (here or beside `category:`): see `_chatter`
        expect:                     # see dream.eval.checks for every check
          - gone: project_slack.md
          - index_lacks: Slack

A step is ``run``, ``run_all`` (read every session again, not only new ones),
``accept``, ``accept_only: [files]``, ``accept_except: [files]``, ``reject``, ``reject_forget``
(reject and drop its requests), ``rollback`` (to the version the last proposal
was based on), ``restore: PATH``, ``logs: [...]`` (more sessions, written
after the previous run) or ``commit: {path: text}`` (one more commit of the
case's project, see dream.eval.project).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from dream.errors import BadInput
from dream.eval.checks import CHECKS
from dream.eval.project import check_commits
from dream.store.layouts import LayoutKind

DEFAULT_STEPS: list[Any] = ["run", "accept"]
STEP_NAMES = {"run", "run_all", "accept", "reject", "reject_forget", "rollback"}
STEP_KEYS = {"accept_only", "accept_except", "logs", "restore", "commit"}


@dataclass
class Log:
    date: date
    text: str
    session: str = ""


@dataclass
class Case:
    category: str
    id: str
    why: str
    store: dict[str, str]
    logs: list[Log]
    steps: list[Any]
    expect: list[dict[str, Any]]
    source: str = ""  # the file it came from, for messages
    today: date | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    project: list[dict[str, str | None]] = field(default_factory=list)  # commits of a git project (dream.eval.project)
    known_miss: dict[str, str] = field(default_factory=dict)  # engine -> why it misses this case, by design
    instructions: dict[str, str] = field(default_factory=dict)  # instruction file ("CLAUDE.md", "~/…") -> text

    chatter: bool = False  # its user lines ask for nothing: a note for a person about them is noise
    layout: LayoutKind = LayoutKind.CLAUDE_CODE  # the store's layout; `codex`: logs become rollout summaries

    def known_miss_for(self, engine: str) -> str:
        return self.known_miss.get(engine) or self.known_miss.get("*", "")


def default_cases_dir() -> Path:
    """The cases shipped with dream: ``data/eval`` in a checkout, installed as ``dream.eval.cases_data``."""
    from importlib.resources import files  # start-up: only `dream eval` reads the cases

    return Path(str(files("dream.eval.cases_data")))  # a folder: dream is installed unzipped


def default_blind_dir() -> Path:
    """The blind cases: ``data/eval-blind`` in a checkout, installed as ``dream.eval.blind_data``; scored only
    per category (`dream eval --blind`), so whoever changes an engine never reads them."""
    from importlib.resources import files  # start-up: only `dream eval` reads the cases

    try:
        return Path(str(files("dream.eval.blind_data")))
    except ModuleNotFoundError:  # a checkout installed before the blind set landed: beside data/eval
        return default_cases_dir().parent / "eval-blind"


def load_cases(folder: Path | str) -> list[Case]:
    folder = Path(folder)
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else [folder] if folder.suffix == ".yaml" else []
    if not files or not files[0].is_file():
        raise BadInput(f"{folder}: no eval case files (*.yaml) found; pass --cases with a folder of them or one")
    cases = [case for path in files for case in _load_file(path)]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise BadInput(f"{case.source}: case id {case.id!r} is used twice")
        seen.add(case.id)
    return cases


def _load_file(path: Path) -> list[Case]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadInput(f"{path}: cannot read eval cases: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not data.get("category"):
        raise BadInput(f"{path}: an eval file needs `category:` and a list under `cases:`")
    chatter = data.get("chatter")  # the file's default for its cases' `chatter:`
    layout = data.get("layout")  # the file's default for its cases' `layout:`
    return [_case(path, str(data["category"]), number, raw, chatter, layout)
            for number, raw in enumerate(data["cases"], 1)]


def _case(path: Path, category: str, number: int, raw: Any, chatter: Any = None, layout: Any = None) -> Case:
    where = f"{path} case {number}"
    if not isinstance(raw, dict) or not raw.get("id"):
        raise BadInput(f"{where}: a case needs an `id:`")
    where = f"{path} case {raw['id']!r}"
    store = raw.get("store") or {}
    if not isinstance(store, dict) or not all(isinstance(v, str) for v in store.values()):
        raise BadInput(f"{where}: `store:` maps file paths to their text")
    expect = raw.get("expect") or []
    for check in expect:
        if not isinstance(check, dict) or len(check) != 1 or next(iter(check)) not in CHECKS:
            raise BadInput(f"{where}: unknown check {check!r} (known: {', '.join(sorted(CHECKS))})")
    steps = raw.get("steps") or DEFAULT_STEPS
    for step in steps:
        _check_step(where, step)
    return Case(
        category=category, id=str(raw["id"]), why=str(raw.get("why", "")), store=dict(store),
        logs=_logs(where, raw.get("logs") or []), steps=list(steps), expect=list(expect), source=str(path),
        today=_date(where, raw["today"]) if raw.get("today") else None, settings=dict(raw.get("settings") or {}),
        project=check_commits(where, raw["project"]) if "project" in raw else [],
        known_miss=_known_miss(where, raw.get("known_miss")),
        instructions=_instructions(where, raw.get("instructions")),
        chatter=_chatter(where, raw.get("chatter", chatter), expect),
        layout=_layout(where, raw.get("layout", layout)),
    )


def _layout(where: str, raw: Any) -> LayoutKind:
    if raw is None:
        return LayoutKind.CLAUDE_CODE
    try:
        return LayoutKind(raw)
    except ValueError:
        raise BadInput(f"{where}: `layout:` is one of {', '.join(k.value for k in LayoutKind)}, "
                       f"not {raw!r}") from None


def _chatter(where: str, raw: Any, expect: list[dict[str, Any]]) -> bool:
    """Whether the case is chatter: said so (`chatter: true/false`, in the case or for its whole file), or
    else a case that expects no change and no note for a person. A request that cannot be applied but should
    reach a person ("yes, remember that", "remember all of this") is no chatter: its file says `chatter: false`."""
    if raw is None:
        names = {next(iter(check)) for check in expect}
        return "no_changes" in names and "needs_person" not in names
    if isinstance(raw, bool):
        return raw
    raise BadInput(f"{where}: `chatter:` is true or false")


def _instructions(where: str, raw: Any) -> dict[str, str]:
    """`instructions: {CLAUDE.md: text, ~/.claude/CLAUDE.md: text}`: a relative path inside the project, or
    `~/` for the user's home; nothing may climb out of either."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise BadInput(f"{where}: `instructions:` maps instruction file paths to their text")
    for name in raw:
        parts = PurePosixPath(name.removeprefix("~/")).parts
        if not parts or name.startswith("/") or ".." in parts or (name.startswith("~") and not name.startswith("~/")):
            raise BadInput(f"{where}: instruction file {name!r} is not a path inside the project or `~/`")
    return dict(raw)


def _known_miss(where: str, raw: Any) -> dict[str, str]:
    """`known_miss: why` (every engine) or `known_miss: {offline: why}`: a miss the scorecard still counts,
    but that does not fail the run. A wrong change is never excused."""
    if raw is None:
        return {}
    if isinstance(raw, str) and raw.strip():
        return {"*": raw.strip()}
    if isinstance(raw, dict) and raw and all(isinstance(v, str) and v.strip() for v in raw.values()):
        return {str(k): v.strip() for k, v in raw.items()}
    raise BadInput(f"{where}: `known_miss:` is a reason, or a map from engine name to a reason")


def _check_step(where: str, step: Any) -> None:
    if isinstance(step, str) and step in STEP_NAMES:
        return
    if isinstance(step, dict) and len(step) == 1 and next(iter(step)) in STEP_KEYS:
        key, value = next(iter(step.items()))
        if key == "logs":
            _logs(where, value)
        if key == "commit":
            check_commits(where, [value])
        return
    raise BadInput(f"{where}: unknown step {step!r} (known: {', '.join(sorted(STEP_NAMES | STEP_KEYS))})")


def _logs(where: str, raw: Any) -> list[Log]:
    if not isinstance(raw, list):
        raise BadInput(f"{where}: `logs:` is a list of sessions with `date:` and `text:`")
    logs = []
    for item in raw:
        if not isinstance(item, dict) or "date" not in item or not isinstance(item.get("text"), str):
            raise BadInput(f"{where}: each log needs `date:` and `text:`")
        logs.append(Log(_date(where, item["date"]), item["text"], str(item.get("session", ""))))
    return logs


def _date(where: str, value: Any) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise BadInput(f"{where}: {value!r} is not a date (YYYY-MM-DD)") from None
