"""The optional C scanners (``dream/_speedups.c``), or None.

Two byte scans dominate reading hundreds of megabytes: splitting activity
logs into entries (`dream.logs`) and picking out the transcript lines worth
parsing (`dream.transcripts.claude_code`). Each has a pure-Python twin that
gives the same result; the C form does it in one pass with the GIL released.

`native` is None when the extension was not built (no C compiler at install
time) or when ``DREAM_NO_SPEEDUPS`` is set; callers read it at call time, so
tests can switch it off to compare the two forms.
"""

from __future__ import annotations

import os
from types import ModuleType


try:
    from dream import _speedups
except ImportError:  # the package no longer builds the C extension; only an old install has it
    _speedups = None

native: ModuleType | None = None if os.environ.get("DREAM_NO_SPEEDUPS") else _speedups


def describe() -> str:
    """One word for reports and benchmarks: which form is in use."""
    return "native" if native is not None else "python"
