"""What each stage of `dream.pipeline.run.run` is called where people watch a run.

The terminal's progress line (`dream.cli.progress`) and the Prefect UI
(`flows/tasks.py`) show the same words. Keyed by the stage function's name,
so that the CLI can name a stage without importing the pipeline at start-up.
"""

from __future__ import annotations

STAGE_NAMES: dict[str, str] = {
    "recover_interrupted_write": "recover",
    "import_logs": "import",
    "mirror_remote": "pull",
    "gate": "gate",
    "snapshot": "snapshot",
    "gather": "gather",
    "consolidate": "consolidate",
    "validate": "validate",
    "propose": "propose",
    "finish": "record",
    "apply_policy": "policy",
}
