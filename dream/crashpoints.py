"""Test hook for crash safety: die at a named point, as abruptly as a power cut."""

from __future__ import annotations

import os
import signal


def crashpoint(name: str) -> None:
    """SIGKILL this process here when DREAM_CRASHPOINT names this point; nothing else happens otherwise."""
    if os.environ.get("DREAM_CRASHPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
