"""Which engine a run asks for, and whether it can run here: decided before anything is gated or locked.

Its own module so that an engine can check its configuration without importing
the package that selects engines (which imports every engine).
"""

from __future__ import annotations

import os

from dream.errors import ConfigError

API_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def resolve_engine_name(name: str) -> str:
    """`auto` means claude when an API key is set, offline otherwise."""
    if name == "auto":
        return "claude" if any(os.environ.get(v) for v in API_KEY_VARIABLES) else "offline"
    return name


def require_configured(name: str) -> None:
    """Refuse an engine that cannot run here, before anything is gated, locked or recorded.

    A missing key is the user's configuration, not a failed run: it must not
    start the failure backoff, which would hold back every other engine too.
    """
    if name == "claude" and not any(os.environ.get(v) for v in API_KEY_VARIABLES):
        raise ConfigError("the claude engine needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment; "
                          "set it, or run with --engine offline")
