"""Settings, and where they come from.

Precedence, highest first: command-line flags, the store's own
``.dream/config.toml``, the global config file (``$DREAM_CONFIG``, else
``$XDG_CONFIG_HOME/dream/config.toml``, else ``~/.config/dream/config.toml``),
then the defaults below. Every file is flat TOML whose keys are the field
names of `Settings`; an unknown key or a bad value is an error that names the
file and the key.
"""

from __future__ import annotations

import os
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from dream.errors import ConfigError
from dream.store.regular import read_regular

MAX_INSTRUCTIONS = 4096


NonNegative = Meta(ge=0)
Positive = Meta(ge=1)


class ModelPrice(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A user's price for one model, US$ per million tokens; cache prices default to 1.25x and 0.1x input.

    `prompt_tokens` is the longest prompt dream may plan for with it (its context window, or where its price
    rises), as in models.toml; unset: the table's, else 200K.
    """

    input: Annotated[float, NonNegative]
    output: Annotated[float, NonNegative]
    cache_write: Annotated[float, NonNegative] | None = None
    cache_read: Annotated[float, NonNegative] | None = None
    prompt_tokens: Annotated[int, Meta(ge=1_000)] | None = None


class Settings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Every setting with its default. Built unchecked from code; `load_settings` checks what files and flags set.

    A msgspec Struct, like the records (see dream/store/records.py for why not pydantic).
    """

    # gate
    enabled: bool = True
    min_hours: Annotated[float, NonNegative] = 24.0
    min_sessions: Annotated[int, NonNegative] = 5
    # engine
    engine: Literal["auto", "offline", "claude"] = "auto"  # auto: claude when ANTHROPIC_API_KEY is set, else offline
    model: str = "claude-sonnet-5-5"  # a current Sonnet from anthropic.types.Model
    instructions: Annotated[str, Meta(max_length=MAX_INSTRUCTIONS)] | None = None
    similarity_threshold: Annotated[float, Meta(ge=0, le=100)] = 90.0  # rapidfuzz score for near-duplicates
    # claude engine: thinking, effort and the memory tool's declaration (docs/claude-engine.md, "Thinking")
    thinking: Literal["adaptive", "disabled", "none"] = "adaptive"  # none: send no `thinking` field (a gateway)
    effort: Literal["low", "medium", "high", "xhigh", "max", "none"] = "medium"  # none: no `output_config`
    memory_tool: Literal["anthropic", "custom"] = "anthropic"  # custom: a plain JSON-schema tool, for any gateway
    # the sessions shown in full in the first (cached) message, together at most this many characters, smallest
    # first; the others get a digest. 0: digests only, for a model with a small context window
    first_message_session_chars: Annotated[int, NonNegative] = 480_000
    # claude engine budgets. A run fails on the dollar ceiling and the wall clock; turns and tokens bind
    # only when set (by default they are derived from the store and the signal, see "Budgets")
    max_cost_usd: Annotated[float, Meta(gt=0)] = 2.0
    max_turns: Annotated[int, Positive] | None = None
    max_input_tokens: Annotated[int, Positive] | None = None
    max_output_tokens: Annotated[int, Positive] | None = None
    timeout_seconds: Annotated[float, Meta(gt=0)] = 900.0
    max_tokens_per_turn: Annotated[int, Positive] | None = None  # None: sized from the largest memory file
    # US$ per million tokens, by model name: [prices."my-model"] input = 1.0, output = 5.0 (see pricing.py)
    prices: dict[str, ModelPrice] = msgspec.field(default_factory=dict)
    # after a failed run the gate waits backoff_minutes * 2**(failures-1), at most backoff_max_hours
    backoff_minutes: Annotated[float, NonNegative] = 30.0
    backoff_max_hours: Annotated[float, NonNegative] = 24.0
    # shared limits across a fleet (docs/prefect.md, "Shared limits"): the names of Prefect global
    # concurrency / rate limits that gate every model call, and the fleet's budget for one night
    model_concurrency_limit: str | None = None
    model_rate_limit: str | None = None
    fleet_budget_tokens: Annotated[int, Positive] | None = None
    fleet_budget_usd: Annotated[float, Meta(gt=0)] | None = None
    # how long the fleet flow waits for a worker of the pool to take up a shard while none of its shards runs;
    # then the shards still waiting are cancelled and their stores reported not dreamed, and the fleet run fails
    fleet_worker_wait_seconds: Annotated[float, Meta(gt=0)] = 1800.0
    # review policy
    auto_accept: bool = False
    auto_accept_requests: bool = False  # may auto_accept take requests that rewrite or remove text?
    # the Anthropic memory store this folder mirrors, "anthropic:memstore_…" (in the store's own config): each run
    # pulls its edits first, and accept, rollback and auto_accept push (dream/remote/configured.py)
    store: Annotated[str, Meta(pattern=r"^anthropic:memstore_[A-Za-z0-9_-]+$")] | None = None
    # the memory folder's layout (docs/layouts.md): unset, the folder's shape says (memory_summary.md: codex)
    layout: Literal["claude-code", "codex"] | None = None
    # transcripts (activity logs derived from agent sessions)
    # "none" in a file: no transcripts, not even detected
    transcripts: Literal["claude-code", "codex", "claude-mem"] | None = None
    transcripts_path: str | None = None
    include_sidechains: bool = False
    max_entry_chars: Annotated[int, Meta(ge=80)] = 2000
    # where a store that imports transcripts keeps its activity logs, instead of <store>/logs: absolute, `~`, or
    # relative to the store (`.dream/logs` leaves the memory folder untouched); `{store}` becomes the store's name
    logs_path: str | None = None
    # where the user's own instruction files are looked for (<home>/.claude/CLAUDE.md, <home>/.codex/AGENTS.md);
    # unset: $CLAUDE_CONFIG_DIR and $CODEX_HOME, else the home directory (dream/engines/instructions.py)
    instructions_home: str | None = None
    # the project the memories describe (configured_project): lint checks against it, and a Codex import
    # takes only the sessions that ran in it
    project: str | None = None
    lint_seconds: Annotated[float, Meta(gt=0)] = 10.0  # a lint stops here; claims left are "not checked"
    # a run proposes `verified_at: <commit>` in a memory whose every claim held (dream/lint/verified.py)
    lint_verified_at: bool = False
    # the offline engine adds a dated note to a memory for each claim the project refutes
    # (dream/engines/offline/lint_notes.py); never to a pinned memory, never taken by auto_accept
    lint_notes: bool = False
    # memories no engine may change or remove, beside those with `pinned: true` (dream/store/pinned.py)
    pinned: tuple[str, ...] = ()
    # a proposal removing more than this share of the memory files, or of the lines, is flagged and
    # never auto-accepted (dream/review/budget.py)
    removal_budget_files: Annotated[float, Meta(ge=0, le=1)] = 0.2
    removal_budget_lines: Annotated[float, Meta(ge=0, le=1)] = 0.2
    # a memory no transcript shows read in this many days, and not pinned, is listed as one to archive
    archive_after_days: Annotated[float, Meta(gt=0)] = 90.0
    # open notes for a person (dream/notes) older than this fold into a count; `dream notes` lists them all
    notes_fold_days: Annotated[float, Meta(gt=0)] = 30.0
    # versions (dream/versions/gc.py): gc after an accept when a version ages out or objects pile up; every
    # version of the last keep_days days stays restorable (90 at least: a lower value is refused)
    auto_gc: bool = True
    keep_days: Annotated[float, Meta(ge=90)] = 90.0

    @property
    def imported_logs_path(self) -> str | None:
        """`logs_path` where the store's logs are imported from transcripts; a store with its own logs/ keeps them."""
        return self.logs_path if self.transcripts or self.layout == "codex" else None

    def as_dict(self) -> dict[str, Any]:
        return {k: msgspec.to_builtins(v) for k, v in msgspec.structs.asdict(self).items()}

    def replace(self, **changes: Any) -> Settings:
        return msgspec.structs.replace(self, **changes)


SETTING_NAMES: tuple[str, ...] = Settings.__struct_fields__


def global_config_path() -> Path:
    explicit = os.environ.get("DREAM_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "dream" / "config.toml"


def store_config_path(store: Path) -> Path:
    return store / ".dream" / "config.toml"


MAX_CONFIG_BYTES = 1024 * 1024


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = read_regular(path, "config", MAX_CONFIG_BYTES, ConfigError)
    except FileNotFoundError:
        return {}
    import tomllib  # start-up: most stores have no config file, and every command reads settings

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    _check_keys(data, str(path))
    return data


def _read_personal(path: Path) -> dict[str, Any]:
    """The user's own config; a home folder dream may not enter skips it (said once), never stops a command.

    A config that is there but damaged is still an error: it says what the user meant to set.
    """
    try:
        os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:  # EACCES: an unreadable $HOME; ENOTDIR, ELOOP: a path that cannot lead to it
        sys.stderr.write(f"dream: warning: {path}: cannot be reached ({exc.strerror}); "
                         f"settings from it are not used\n")
        return {}
    return _read_toml(path)


def _check_keys(data: dict[str, Any], where: str) -> None:
    unknown = sorted(set(data) - set(SETTING_NAMES))
    if unknown:
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r}")


def _describe(exc: msgspec.ValidationError, where: str) -> str:
    """'…/config.toml: setting 'min_hours' expected `float` >= 0' from msgspec's message."""
    what, _, at = str(exc).partition(" - at `$.")
    key = at.rstrip("`").split("[")[0] or "?"
    choices = _choices(key)
    return f"{where}: setting {key!r} {what[:1].lower()}{what[1:]}" + (f" (one of: {choices})" if choices else "")


def _choices(key: str) -> str:
    """'auto, offline, claude' for a setting that takes one of a few words; '' for any other."""
    words = _literal_words(typing.get_type_hints(Settings).get(key))
    return ", ".join(words + ([TRANSCRIPTS_OFF] if key == "transcripts" else []))


def _literal_words(hint: Any) -> list[str]:
    if typing.get_origin(hint) is Literal:
        return list(typing.get_args(hint))
    return [word for part in typing.get_args(hint) for word in _literal_words(part)]  # inside `… | None`


def _layers(store: Path | None, overrides: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """Each source of settings with what it sets, lowest precedence first."""
    personal = global_config_path()
    layers = [(str(personal), _read_personal(personal))]
    if store is not None:
        layers.append((str(store_config_path(store)), _read_toml(store_config_path(store))))
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    _check_keys(flags, "command line")
    layers.append(("command line", flags))
    return layers


def setting_sources(store: Path | None = None, overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """Where each setting's value comes from: a file path, "command line", "default" or "detected …"."""
    sources = {name: "default" for name in SETTING_NAMES}
    for where, layer in _layers(store, overrides):
        sources.update({key: where for key in layer})
    if store is not None and sources["transcripts_path"] == "default":
        if sources["transcripts"] == "default" and is_claude_code_memory(store):
            sources["transcripts"] = DETECTED
        elif sources["transcripts"] == str(global_config_path()) and load_settings(store, overrides).transcripts is None:
            sources["transcripts"] = f"default ({sources['transcripts']} names claude-code for Claude Code's stores; "\
                                     f"this is not one)"
    return sources


DETECTED = "detected (a Claude Code memory folder: ~/.claude/projects/<project>/memory)"


def load_settings(store: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Merge defaults, the global file, the store file and `overrides` (in that order).

    For a store, the transcript source is then decided for that store
    (`_transcripts_for_store`).
    """
    merged: dict[str, Any] = {}
    settings = Settings()
    transcripts_from = "default"
    for where, layer in _layers(store, overrides):
        if not layer:  # most stores have no config file: nothing new to check
            continue
        if "store" in layer and where == str(global_config_path()):  # every store would mirror the same one
            raise ConfigError(f"{where}: setting 'store' names the memory store one folder mirrors; set it in "
                              "that folder's .dream/config.toml")
        merged.update(layer)
        if "transcripts" in layer:
            transcripts_from = where
            if layer["transcripts"] == TRANSCRIPTS_OFF:  # switched off: the store reads its own logs/ only
                merged["transcripts"], transcripts_from = None, TRANSCRIPTS_OFF
        try:  # checked layer by layer, so that an error names the file that caused it
            settings = msgspec.convert(merged, Settings, strict=False)
        except msgspec.ValidationError as exc:
            raise ConfigError(_describe(exc, where)) from None
    if store is None or settings.transcripts_path:  # a path the user named: their source, as they said it
        return settings
    transcripts = _transcripts_for_store(store, settings.transcripts, transcripts_from)
    return settings if transcripts == settings.transcripts else settings.replace(transcripts=transcripts)


def configured_project(store: Path, settings: Settings) -> Path | None:
    """The project the store's memories describe, as its config names it (``project = PATH``, relative to the store).

    Lint checks the memories against it; a Codex import with no path takes
    only the sessions that ran in it.
    """
    if not settings.project:
        return None
    path = Path(settings.project).expanduser()
    return path if path.is_absolute() else store / path


def is_claude_code_memory(store: Path) -> bool:
    """Claude Code keeps a project's memory at ``~/.claude/projects/<project>/memory``, its sessions beside it.

    The folder above ``projects`` must be Claude Code's own (``.claude``, or
    ``$CLAUDE_CONFIG_DIR`` where that moves it): any other ``projects/<p>/memory``
    is an ordinary store, and reading transcripts it does not have would make
    every fleet scan treat it as due.
    """
    folder = Path(os.path.abspath(store))
    if folder.name != "memory" or folder.parent.parent.name != "projects":
        return False
    config_dir = folder.parent.parent.parent
    if config_dir.name == ".claude":
        return True
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return moved is not None and moved != "" and config_dir == Path(os.path.abspath(moved))


TRANSCRIPTS_OFF = "none"


def _transcripts_for_store(store: Path, configured: str | None, where: str) -> Any:
    """A Claude Code memory folder reads its project's transcripts unless told otherwise.

    ``transcripts = "none"`` (in either file) switches detection off: the
    store dreams from its own ``logs/`` only. A source named only in the
    global file is meant for the stores it fits: "claude-code" there does not apply to a store outside Claude Code's
    projects (it would have no transcripts beside it), so such a store keeps
    the default.
    """
    if where == TRANSCRIPTS_OFF:
        return None
    claude_store = is_claude_code_memory(store)
    if configured is None:
        return "claude-code" if claude_store else None
    if configured == "claude-code" and not claude_store and where == str(global_config_path()):
        return None
    return configured
